#!/usr/bin/env bash
# Builds a Kubernetes control plane from the Go module proxy for the
# Kubernetes executor's tests (docs/multinode.md): kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl and etcd in one
# throwaway module, kwok (fake nodes) with go install, and the JobSet
# controller in a second throwaway module. Versions are pinned here; the binaries land in
# ${GPUFLOW_K8S_DIR:-.k8s}/bin, and a second run with the same pins
# returns at once.
#
# k8s.io/kubernetes cannot be go-installed: its go.mod replaces every
# staging module (k8s.io/api, k8s.io/client-go, ...) with a directory
# inside the repository. The throwaway module requires it and replaces
# each staging module with its published release of the same minor.
set -euo pipefail
cd "$(dirname "$0")/../.."

KUBERNETES_VERSION=v1.34.4
STAGING_VERSION=v0.34.4
ETCD_VERSION=v3.6.4
KWOK_VERSION=v0.7.0
JOBSET_VERSION=v0.10.1

dir=${GPUFLOW_K8S_DIR:-$PWD/.k8s}
bin=$dir/bin
pins="kubernetes $KUBERNETES_VERSION etcd $ETCD_VERSION kwok $KWOK_VERSION jobset $JOBSET_VERSION"
binaries="kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok jobset"

up_to_date() {
  [ -f "$bin/PINS" ] && [ "$(cat "$bin/PINS")" = "$pins" ] || return 1
  for b in $binaries; do [ -x "$bin/$b" ] || return 1; done
}
if up_to_date; then
  echo "k8s: binaries in $bin are up to date ($pins)"
  exit 0
fi
rm -f "$bin/PINS"
mkdir -p "$bin" "$dir/module" "$dir/jobset-module"

export CGO_ENABLED=0
flags=(-trimpath -ldflags "-s -w")

echo "k8s: control plane and etcd from k8s.io/kubernetes $KUBERNETES_VERSION"
(
  cd "$dir/module"
  cat > go.mod <<MOD
module gpuflow.test/k8sbuild

go 1.24.0

require (
	k8s.io/kubernetes $KUBERNETES_VERSION
	go.etcd.io/etcd/server/v3 $ETCD_VERSION
)
MOD
  upstream=$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  for m in $(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$upstream"); do
    go mod edit -replace="$m=$m@$STAGING_VERSION"
  done
  GOFLAGS=-mod=mod go build "${flags[@]}" -o "$bin/" \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler \
    k8s.io/kubernetes/cmd/kubectl
  GOFLAGS=-mod=mod go build "${flags[@]}" -o "$bin/etcd" go.etcd.io/etcd/server/v3
)

echo "k8s: kwok $KWOK_VERSION"
GOBIN=$bin go install "${flags[@]}" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"

# `go install sigs.k8s.io/jobset@VERSION` stops at the proxy's listing of
# the module's versions (to look for a deprecation notice), which the
# proxy refuses for this module; a build inside a module that requires
# the pinned version asks for that version only.
echo "k8s: JobSet controller $JOBSET_VERSION"
(
  cd "$dir/jobset-module"
  printf 'module gpuflow.test/jobsetbuild\n\ngo 1.24.0\n\nrequire sigs.k8s.io/jobset %s\n' "$JOBSET_VERSION" > go.mod
  GOFLAGS=-mod=mod go build "${flags[@]}" -o "$bin/jobset" sigs.k8s.io/jobset
)

echo "$pins" > "$bin/PINS"
echo "k8s: built $binaries into $bin"
