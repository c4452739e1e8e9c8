// The OpenID provider the tests sign in with: zitadel/oidc's example provider (its storage, clients,
// users and login page, from the Go module proxy at the version go.mod pins), served on the loopback
// interface only. Environment, as the example reads it: PORT (issuer http://localhost:PORT/),
// REDIRECT_URI (comma-separated: the redirect URIs its clients `web`, `native` and `api` accept; `web`
// and `api` have the secret `secret`), USERS_FILE (a JSON file of users, the example's format; unset:
// its users test-user@localhost and test-user2, password verysecure).
package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/zitadel/oidc/v3/example/server/config"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
)

func main() {
	cfg := config.FromEnvVars(&config.Config{Port: "9998"})
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	issuer := fmt.Sprintf("http://localhost:%s/", cfg.Port)
	storage.RegisterClients(
		storage.NativeClient("native", cfg.RedirectURI...),
		storage.WebClient("web", "secret", cfg.RedirectURI...),
		storage.WebClient("api", "secret", cfg.RedirectURI...),
	)
	var users storage.UserStore
	if cfg.UsersFile == "" {
		users = storage.NewUserStore(issuer)
	} else {
		loaded, err := storage.StoreFromFile(cfg.UsersFile)
		if err != nil {
			logger.Error("cannot read USERS_FILE", "error", err)
			os.Exit(1)
		}
		users = loaded
	}
	router := exampleop.SetupServer(issuer, storage.NewStorage(users), logger, false)
	listener, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", cfg.Port))
	if err != nil {
		logger.Error("cannot listen", "error", err)
		os.Exit(1)
	}
	logger.Info("oidc provider listening", "issuer", issuer)
	if err := http.Serve(listener, router); err != nil {
		logger.Error("server terminated", "error", err)
		os.Exit(1)
	}
}
