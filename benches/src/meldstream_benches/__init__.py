"""meldstream's benchmarks, one module per `make bench-*` target (docs/benchmarks.md). A package of
its own so that no service image ships them: `make setup` installs it into the development virtualenv
only, and deploy/service.Dockerfile builds wheels of libs/ and services/ alone."""
