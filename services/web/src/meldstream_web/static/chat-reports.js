// The operators' view of chat reports (/operate/chat): each report with the lines around the reported
// one, all set as text. The gateway answers only accounts with the `operate` scope.
import { call } from "/static/api.js";
import { t, tn } from "/static/i18n.js";

function text(tag, value, className = "") {
  const node = document.createElement(tag);
  node.textContent = value;
  if (className) node.className = className;
  return node;
}

function when(seconds) {
  return new Date(seconds * 1000).toISOString().replace("T", " ").slice(0, 19) + " UTC";
}

async function load() {
  const status = document.getElementById("reports-status");
  let reports;
  try {
    reports = (await call("GET", "/api/chat/reports")).reports;
  } catch (error) {
    status.textContent = error.message;
    return;
  }
  status.textContent = reports.length ? tn("reports.count", reports.length) : t("reports.none");
  const list = document.getElementById("reports");
  for (const report of reports) {
    const item = document.createElement("li");
    item.className = "chat-report-entry";
    const line = report.line;
    item.append(text("p", t("reports.entry", { at: when(report.at), reporter_name: report.reporter_name || report.reporter,
      reporter: report.reporter, name: line.name, author: line.author, room: line.room, channel: line.channel }) +
      (report.reason ? `: ${report.reason}` : "")));
    const context = document.createElement("ul");
    for (const other of report.context) {
      const entry = text("li", `${when(other.at)} ${other.name} (${other.author}) [${other.channel}]: ${other.text}`);
      if (other.id === line.id) entry.className = "reported";
      context.append(entry);
    }
    item.append(context);
    list.append(item);
  }
}

load();
