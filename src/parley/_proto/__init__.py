"""Generated gRPC stubs of a2a.proto (A2A v0.3.0), made by scripts/gen-proto. Do not edit."""
