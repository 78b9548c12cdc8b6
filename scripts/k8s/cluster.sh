#!/usr/bin/env bash
# Starts a Kubernetes control plane on 127.0.0.1 for the Kubernetes
# executor's tests (docs/multinode.md): etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kwok standing in for the
# kubelets of two GPU nodes, and the JobSet controller with its API. It builds the binaries first when needed
# (scripts/k8s/build.sh), generates its certificates locally, and waits
# until both nodes are Ready.
#
#   scripts/k8s/cluster.sh start    start it (again: nothing while it is up)
#   scripts/k8s/cluster.sh stop     stop it and remove its data
#   scripts/k8s/cluster.sh env      print the export of KUBECONFIG
#
# Everything lives in ${GPUFLOW_K8S_DIR:-.k8s}/cluster: the kubeconfig
# (kubeconfig), logs (*.log), and the file the fake nodes serve as every
# container's log (container.log). Ports: kube-apiserver 16443, etcd 12379
# and 12380, kwok 10247, the JobSet controller's webhooks 19443 and its
# health probe 18081, all on 127.0.0.1. The nodes, kwok-gpu-0 and
# kwok-gpu-1, have 8 nvidia.com/gpu each.
#
# kwok takes pods through their phases without running anything (the
# stages are kwok's own, from its module, plus one in kwok-stages.yaml that
# fails a pod with the exit code in its gpuflow.test/exit-code annotation).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
k8s=${GPUFLOW_K8S_DIR:-$root/.k8s}
bin=$k8s/bin
dir=$k8s/cluster
readonly api_port=16443 etcd_port=12379 etcd_peer_port=12380 kwok_port=10247
readonly jobset_webhook_port=19443 jobset_health_port=18081

log() { echo "k8s cluster: $*"; }
die() { echo "k8s cluster: $*" >&2; exit 1; }

pid_alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop_pid() {
  local f=$1 pid
  pid_alive "$f" || { rm -f "$f"; return 0; }
  pid=$(cat "$f")
  kill "$pid"
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$f"
}

# daemon NAME ARGS...: starts a binary of ours in the background.
daemon() {
  local name=$1; shift
  "$bin/$name" "$@" >"$dir/$name.log" 2>&1 &
  echo $! >"$dir/$name.pid"
}

certs() {
  [ -s "$dir/pki/admin.crt" ] && [ -s "$dir/pki/jobset-webhook.crt" ] && return
  log "generating certificates"
  mkdir -p "$dir/pki"
  (
    cd "$dir/pki"
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=gpuflow-test-ca -keyout ca.key -out ca.crt 2>/dev/null
    issue() { # NAME SUBJECT [SAN]
      openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$1.key" -out "$1.csr" 2>/dev/null
      local ext=/dev/null
      if [ -n "${3:-}" ]; then printf 'subjectAltName=%s\n' "$3" >"$1.ext"; ext=$1.ext; fi
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -extfile "$ext" -out "$1.crt" 2>/dev/null
    }
    issue apiserver /CN=kube-apiserver "IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc"
    issue kwok /CN=kwok "IP:127.0.0.1,DNS:localhost"
    issue jobset-webhook /CN=jobset-webhook "IP:127.0.0.1"
    issue admin "/O=system:masters/CN=gpuflow-admin"
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  )
}

kubeconfig() {
  cat >"$dir/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: gpuflow-test
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority: $dir/pki/ca.crt
users:
- name: admin
  user:
    client-certificate: $dir/pki/admin.crt
    client-key: $dir/pki/admin.key
contexts:
- name: gpuflow-test
  context: {cluster: gpuflow-test, user: admin, namespace: default}
current-context: gpuflow-test
KC
}

# module_dir NAME: the folder of the pinned module NAME (as PINS names
# it, at the version PINS gives), from the module cache build.sh filled.
module_dir() {
  local version
  version=$(sed -n "s/.*$1 \(v[^ ]*\).*/\1/p" "$bin/PINS")
  (cd "$k8s/module" && go mod download -json "$2@$version" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
}

# kwok_config writes kwok's stages: kwok's own for nodes and pods, from
# the module build.sh downloaded, and ours; and the log every container
# serves.
kwok_config() {
  local src
  src=$(module_dir kwok sigs.k8s.io/kwok)
  : >"$dir/container.log"
  {
    for f in node/fast/node-initialize.yaml node/heartbeat/node-heartbeat.yaml pod/general/pod-create.yaml \
      pod/general/pod-ready.yaml pod/general/pod-complete.yaml pod/general/pod-delete.yaml; do
      cat "$src/kustomize/stage/$f"; echo "---"
    done
    cat "$root/scripts/k8s/kwok-stages.yaml"; echo "---"
    cat <<LOGS
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: gpuflow-test
spec:
  logs:
  - logsFile: $dir/container.log
    follow: true
LOGS
  } >"$dir/kwok.yaml"
}

wait_for() { # WHAT SECONDS COMMAND...
  local what=$1 secs=$2; shift 2
  for _ in $(seq $((secs * 5))); do "$@" >/dev/null 2>&1 && return; sleep 0.2; done
  die "$what did not come up in ${secs}s; see $dir/*.log"
}

nodes() {
  for i in 0 1; do
    cat <<NODE
apiVersion: v1
kind: Node
metadata:
  name: kwok-gpu-$i
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, kubernetes.io/hostname: kwok-gpu-$i, nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
spec:
  taints:
  - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
status:
  allocatable: {cpu: "64", memory: 1Ti, pods: "110", nvidia.com/gpu: "8"}
  capacity: {cpu: "64", memory: 1Ti, pods: "110", nvidia.com/gpu: "8"}
---
NODE
  done
}

# jobset_webhooks prints the JobSet controller's admission webhooks as
# its release registers them, but addressed by URL: an installed
# controller is reached through a Service backed by its pod, and the
# kwok nodes have no pod network, so this controller runs beside the
# API server and serves its webhooks on 127.0.0.1.
jobset_webhooks() {
  local url=https://127.0.0.1:$jobset_webhook_port ca
  ca=$(base64 -w0 "$dir/pki/ca.crt")
  local pods='objectSelector: {matchExpressions: [{key: jobset.sigs.k8s.io/jobset-name, operator: Exists}]}'
  cat <<HOOKS
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: jobset-mutating-webhook-configuration}
webhooks:
- name: mjobset.kb.io
  admissionReviewVersions: [v1]
  clientConfig: {url: "$url/mutate-jobset-x-k8s-io-v1alpha2-jobset", caBundle: "$ca"}
  failurePolicy: Fail
  sideEffects: None
  rules: [{apiGroups: [jobset.x-k8s.io], apiVersions: [v1alpha2], operations: [CREATE], resources: [jobsets]}]
- name: mpod.kb.io
  admissionReviewVersions: [v1]
  clientConfig: {url: "$url/mutate--v1-pod", caBundle: "$ca"}
  failurePolicy: Fail
  sideEffects: None
  $pods
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: jobset-validating-webhook-configuration}
webhooks:
- name: vjobset.kb.io
  admissionReviewVersions: [v1]
  clientConfig: {url: "$url/validate-jobset-x-k8s-io-v1alpha2-jobset", caBundle: "$ca"}
  failurePolicy: Fail
  sideEffects: None
  rules: [{apiGroups: [jobset.x-k8s.io], apiVersions: [v1alpha2], operations: [CREATE, UPDATE], resources: [jobsets]}]
- name: vpod.kb.io
  admissionReviewVersions: [v1]
  clientConfig: {url: "$url/validate--v1-pod", caBundle: "$ca"}
  failurePolicy: Fail
  sideEffects: None
  $pods
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
HOOKS
}

# start_jobset installs the JobSet CRD from the pinned release and starts
# its controller with the webhook certificate from our CA (its own
# certificate rotation writes into a Secret for an in-cluster Service).
start_jobset() {
  local kc=$dir/kubeconfig src certs=$dir/jobset-certs
  src=$(module_dir jobset sigs.k8s.io/jobset)
  mkdir -p "$certs"
  cp "$dir/pki/jobset-webhook.crt" "$certs/tls.crt"
  cp "$dir/pki/jobset-webhook.key" "$certs/tls.key"
  cat >"$dir/jobset.yaml" <<CFG
apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
webhook: {host: 127.0.0.1, port: $jobset_webhook_port, certDir: $certs}
metrics: {bindAddress: "0"}
health: {healthProbeBindAddress: "127.0.0.1:$jobset_health_port"}
CFG
  # The CRD is larger than client-side apply's annotation allows.
  "$bin/kubectl" --kubeconfig "$kc" apply --server-side -f "$src/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml" >/dev/null
  wait_for "the JobSet CRD" 60 "$bin/kubectl" --kubeconfig "$kc" wait --for=condition=Established crd/jobsets.jobset.x-k8s.io --timeout=1s
  jobset_webhooks | "$bin/kubectl" --kubeconfig "$kc" apply -f - >/dev/null
  daemon jobset --kubeconfig "$kc" --config "$dir/jobset.yaml"
  wait_for "the JobSet controller's webhooks" 90 jobset_admits
}

# jobset_admits asks the API server to admit a JobSet without storing it,
# which goes through the controller's webhooks.
jobset_admits() {
  "$bin/kubectl" --kubeconfig "$dir/kubeconfig" create --dry-run=server -f - <<JS
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: admission-check, namespace: default}
spec:
  replicatedJobs:
  - name: node
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{name: c, image: registry.example.com/check}]
JS
}

start() {
  if pid_alive "$dir/kube-apiserver.pid" && pid_alive "$dir/jobset.pid" && "$bin/kubectl" --kubeconfig "$dir/kubeconfig" get --raw /readyz >/dev/null 2>&1; then
    log "already running (KUBECONFIG=$dir/kubeconfig)"; return
  fi
  stop_all
  "$root/scripts/k8s/build.sh"
  mkdir -p "$dir"
  certs
  kubeconfig
  kwok_config
  local kc=$dir/kubeconfig pki=$dir/pki
  log "starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok"
  daemon etcd --data-dir "$dir/etcd" --listen-client-urls "http://127.0.0.1:$etcd_port" \
    --advertise-client-urls "http://127.0.0.1:$etcd_port" --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" \
    --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
    --initial-cluster "default=http://127.0.0.1:$etcd_peer_port" --quota-backend-bytes 268435456
  daemon kube-apiserver --etcd-servers "http://127.0.0.1:$etcd_port" --bind-address 127.0.0.1 \
    --advertise-address 127.0.0.1 --secure-port "$api_port" --tls-cert-file "$pki/apiserver.crt" \
    --tls-private-key-file "$pki/apiserver.key" --client-ca-file "$pki/ca.crt" --authorization-mode Node,RBAC \
    --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$pki/sa.pub" \
    --service-account-signing-key-file "$pki/sa.key" --service-cluster-ip-range 10.96.0.0/16 \
    --kubelet-client-certificate "$pki/admin.crt" --kubelet-client-key "$pki/admin.key" \
    --kubelet-preferred-address-types InternalIP --allow-privileged --enable-priority-and-fairness=false
  wait_for kube-apiserver 120 "$bin/kubectl" --kubeconfig "$kc" get --raw /readyz
  daemon kube-controller-manager --kubeconfig "$kc" --authentication-kubeconfig "$kc" \
    --authorization-kubeconfig "$kc" --bind-address 127.0.0.1 --secure-port 0 --leader-elect=false \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
    --controllers '*,-nodeipam,-cloud-node-lifecycle' --concurrent-job-syncs 5
  daemon kube-scheduler --kubeconfig "$kc" --authentication-kubeconfig "$kc" \
    --authorization-kubeconfig "$kc" --bind-address 127.0.0.1 --secure-port 0 --leader-elect=false
  daemon kwok --kubeconfig "$kc" --config "$dir/kwok.yaml" --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake --node-ip 127.0.0.1 \
    --node-port "$kwok_port" --server-address "127.0.0.1:$kwok_port" \
    --tls-cert-file "$pki/kwok.crt" --tls-private-key-file "$pki/kwok.key"
  nodes | "$bin/kubectl" --kubeconfig "$kc" apply -f - >/dev/null
  wait_for "the default service account" 60 "$bin/kubectl" --kubeconfig "$kc" get serviceaccount default
  wait_for "the kwok nodes" 60 "$bin/kubectl" --kubeconfig "$kc" wait --for=condition=Ready node --all --timeout=1s
  log "starting the JobSet controller"
  start_jobset
  log "up: export KUBECONFIG=$kc"
}

stop_all() {
  for p in jobset kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do stop_pid "$dir/$p.pid"; done
  # The kubeconfig names a cluster that is gone: without it the tests
  # skip (or fail under GPUFLOW_REQUIRE_K8S=1) instead of waiting on it.
  rm -rf "$dir/etcd" "$dir/kubeconfig"
}

case "${1:-start}" in
  start) start ;;
  stop) stop_all; log "stopped" ;;
  env) echo "export KUBECONFIG=$dir/kubeconfig" ;;
  *) die "usage: $0 start|stop|env" ;;
esac
