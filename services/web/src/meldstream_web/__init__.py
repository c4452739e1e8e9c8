"""The web gateway: serves the browser app and bridges it to the platform's gRPC APIs."""
