"""Generated gRPC stubs of a2a.proto (A2A v1.0.1, package lf.a2a.v1), made by
scripts/gen-proto. Do not edit."""
