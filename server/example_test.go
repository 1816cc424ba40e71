package server_test

import (
	"context"
	"log"
	"net/http"
	"os"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/server"
)

// An embedding host builds an App from catalogs and serves its handler:
// HTTP routes and MCP (Streamable HTTP at /mcp). A tenants file turns auth
// on; without one only loopback clients are served.
func ExampleNew() {
	ctx := context.Background()
	backend, err := demo.Start(ctx, demo.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer backend.Close()
	catalogs, err := demo.LoadCatalogs(backend.URL())
	if err != nil {
		log.Fatal(err)
	}
	cfg := server.Config{
		CacheDir:         os.TempDir() + "/plasmd-example-cache",
		AnonymousSecrets: server.BindSecrets(backend.Backend().Secrets(), demo.SecretCatalogs()),
	}
	if path := os.Getenv("PLASMD_TENANTS"); path != "" {
		if cfg.Tenants, err = server.LoadTenants(path); err != nil {
			log.Fatal(err)
		}
	}
	app, err := server.New(ctx, cfg, catalogs)
	if err != nil {
		log.Fatal(err)
	}
	defer app.Close(ctx)
	log.Fatal(http.ListenAndServe("127.0.0.1:8787", app.Handler()))
}
