// The operators' view of chat reports (/operate/chat): each report with the lines around the reported
// one, all set as text. The gateway answers only accounts with the `operate` scope.
import { call } from "/static/api.js";

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
  status.textContent = reports.length ? `${reports.length} reports, newest first` : "No reports.";
  const list = document.getElementById("reports");
  for (const report of reports) {
    const item = document.createElement("li");
    item.className = "chat-report-entry";
    const line = report.line;
    item.append(text("p", `${when(report.at)}: ${report.reporter_name || report.reporter} (${report.reporter}) reported ${line.name} (${line.author}) in ${line.room}, ${line.channel}` + (report.reason ? `: ${report.reason}` : "")));
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
