"""The HTTP API's edge: the caller, the request's parsing and limits, and the query parameters its routes share."""
