"""The stack's HTTP API on a local port (issue #19): what API Gateway does in front of the functions.

* :mod:`.routes`: the API's routes and integrations, read back from the local endpoint
  (GetApis/GetRoutes/GetIntegrations, as any client of API Gateway would), matched like API
  Gateway matches ``METHOD /path/{param}``;
* :mod:`.sigv4`: the IAM authorizer: a request must carry a valid Signature Version 4 of the
  local stack's credentials (or of an access key created in its IAM), else 403 as API Gateway answers;
* :mod:`.server`: an HTTP server that builds the payload format 2.0 event API Gateway would send
  (``requestContext.authorizer.iam`` for a signed caller) and runs the built function through the
  emulator's Lambda runtime, then turns its answer into the HTTP response.
"""
