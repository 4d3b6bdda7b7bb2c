#!/bin/sh
# The base image's entrypoint, as in AWS's public.ecr.aws/lambda/python images: the handler is the
# only argument; without AWS_LAMBDA_RUNTIME_API it runs under the Runtime Interface Emulator.
# (`sam local invoke` does not use it: it starts its own emulator, /var/rapid/aws-lambda-rie.)
if [ $# -ne 1 ]; then
    echo "entrypoint requires the handler name to be the first argument" 1>&2
    exit 142
fi
export _HANDLER="$1"
RUNTIME_ENTRYPOINT=/var/runtime/bootstrap
if [ -z "${AWS_LAMBDA_RUNTIME_API}" ]; then
    exec /usr/local/bin/aws-lambda-rie "$RUNTIME_ENTRYPOINT"
else
    exec "$RUNTIME_ENTRYPOINT"
fi
