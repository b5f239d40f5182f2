#!/usr/bin/env python3
"""Checks the DaemonSet manifest without a cluster, and turns its runtime settings into podman flags.

  manifest.py check FILE          structure, references and the settings the agent needs
  manifest.py podman-args FILE    podman run flags for the agent container: host namespaces,
                                  capabilities, security options and hostPath mounts, exactly as
                                  the manifest gives them (the ConfigMap mount is left to the caller)
  manifest.py capabilities FILE   the added capabilities, CAP_-prefixed, one per line

Debian 12 has no kubectl package, and `kubectl apply --dry-run=client` needs an API server for
discovery anyway: this is the check the tests run. Exit 1 with one line per problem.
"""
import sys

import yaml

LINUX_CAPS = {
    "CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP",
    "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER",
    "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE",
    "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP",
    "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF",
    "CHECKPOINT_RESTORE"}
HOSTPATH_TYPES = {"", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice"}
# What the agent needs from the host (docs/install.md): kernel BTF for CO-RE, tracefs for the
# tracepoints, /run for ptp4l's management socket (and the agent's reply sockets next to it).
REQUIRED_HOST_PATHS = {"/sys/kernel/btf": "/sys/kernel/btf", "/sys/kernel/tracing": "/sys/kernel/tracing", "/run": "/run"}
SCRAPE_ANNOTATIONS = {"prometheus.io/scrape": "true", "prometheus.io/port": "9477", "prometheus.io/path": "/metrics"}


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def daemonset(docs):
    found = [d for d in docs if d.get("kind") == "DaemonSet"]
    if len(found) != 1:
        sys.exit(f"expected one DaemonSet, found {len(found)}")
    return found[0]


def agent_container(pod):
    return pod["containers"][0]


def check(docs):
    problems = []
    need = lambda cond, msg: cond or problems.append(msg)
    kinds = {("v1", "Namespace"), ("v1", "ConfigMap"), ("v1", "Secret"), ("apps/v1", "DaemonSet")}
    by_kind = {}
    for d in docs:
        need((d.get("apiVersion"), d.get("kind")) in kinds, f"unexpected object {d.get('apiVersion')}/{d.get('kind')}")
        need(isinstance(d.get("metadata", {}).get("name"), str), f"{d.get('kind')}: metadata.name missing")
        by_kind.setdefault(d.get("kind"), {})[d["metadata"].get("name")] = d
    namespace = next(iter(by_kind.get("Namespace", {})), None)
    for d in docs:
        if d.get("kind") != "Namespace":
            need(d["metadata"].get("namespace") == namespace, f"{d['kind']} {d['metadata']['name']}: not in namespace {namespace}")
    ds = daemonset(docs)
    spec = ds["spec"]
    tmpl = spec["template"]
    labels = tmpl["metadata"].get("labels", {})
    for k, v in spec["selector"]["matchLabels"].items():
        need(labels.get(k) == v, f"selector {k}={v} does not match the pod template's labels")
    for k, v in SCRAPE_ANNOTATIONS.items():
        need(tmpl["metadata"].get("annotations", {}).get(k) == v, f"pod annotation {k}: {v!r} expected")
    pod = tmpl["spec"]
    need(pod.get("hostNetwork") is True, "hostNetwork must be true (the host's traffic and address)")
    need(pod.get("hostPID") is True, "hostPID must be true")
    need(pod.get("dnsPolicy") == "ClusterFirstWithHostNet", "dnsPolicy ClusterFirstWithHostNet (Kafka names with hostNetwork)")
    c = agent_container(pod)
    need(bool(c.get("name")) and bool(c.get("image")), "container name and image are required")
    sc = c.get("securityContext", {})
    need(sc.get("privileged") is not True, "the agent must not be privileged")
    need(sc.get("allowPrivilegeEscalation") is False, "allowPrivilegeEscalation must be false")
    caps = sc.get("capabilities", {})
    need(caps.get("drop") == ["ALL"], "capabilities.drop must be [ALL]")
    need(sc.get("seccompProfile", {}).get("type") in ("Unconfined", "RuntimeDefault", "Localhost"), "seccompProfile.type must be set")
    for cap in caps.get("add", []):
        need(cap in LINUX_CAPS, f"unknown capability {cap} (Kubernetes names have no CAP_ prefix)")
    ports = [p.get("containerPort") for p in c.get("ports", [])]
    need(9477 in ports, "containerPort 9477 (metrics) missing")
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    for m in mounts.values():
        need(m["name"] in volumes, f"volumeMount {m['mountPath']} names no volume {m['name']}")
    for v in volumes.values():
        if "hostPath" in v:
            need(v["hostPath"].get("type", "") in HOSTPATH_TYPES, f"volume {v['name']}: bad hostPath type")
        elif "configMap" in v:
            need(v["configMap"]["name"] in by_kind.get("ConfigMap", {}), f"volume {v['name']}: no ConfigMap {v['configMap']['name']}")
    host_mounts = {volumes[m["name"]]["hostPath"]["path"]: path for path, m in mounts.items() if "hostPath" in volumes.get(m["name"], {})}
    for host, inside in REQUIRED_HOST_PATHS.items():
        need(host_mounts.get(host) == inside, f"host {host} must be mounted at {inside}")
    config = [p for p, m in mounts.items() if "configMap" in volumes.get(m["name"], {})]
    need(config == ["/etc/skewscope"], "the ConfigMap must be mounted at /etc/skewscope")
    need("--config=/etc/skewscope/agent.conf" in c.get("args", []), "args must read --config=/etc/skewscope/agent.conf")
    for cm in by_kind.get("ConfigMap", {}).values():
        need("agent.conf" in cm.get("data", {}), f"ConfigMap {cm['metadata']['name']}: no agent.conf")
    env_names = set()
    for e in c.get("env", []):
        env_names.add(e["name"])
        ref = e.get("valueFrom", {}).get("secretKeyRef")
        if ref:
            secret = by_kind.get("Secret", {}).get(ref["name"])
            need(secret is not None, f"env {e['name']}: no Secret {ref['name']}")
            if secret:
                need(ref["key"] in {**secret.get("data", {}), **secret.get("stringData", {})}, f"env {e['name']}: Secret has no key {ref['key']}")
    for a in c.get("args", []):
        for part in a.split("$(")[1:]:
            need(part.split(")")[0] in env_names, f"arg {a}: $({part.split(')')[0]}) is not an env variable")
    return problems


def podman_args(docs):
    ds = daemonset(docs)
    pod = ds["spec"]["template"]["spec"]
    c = agent_container(pod)
    sc = c.get("securityContext", {})
    out = []
    if pod.get("hostNetwork"):
        out.append("--network=host")
    if pod.get("hostPID"):
        out.append("--pid=host")
    if sc.get("privileged"):
        out.append("--privileged")
    caps = sc.get("capabilities", {})
    if caps.get("drop"):
        out.append("--cap-drop=" + ",".join(x.lower() for x in caps["drop"]))
    if caps.get("add"):
        out.append("--cap-add=" + ",".join("CAP_" + x for x in caps["add"]))
    if sc.get("allowPrivilegeEscalation") is False:
        out.append("--security-opt=no-new-privileges")
    seccomp = sc.get("seccompProfile", {}).get("type")
    if seccomp == "Unconfined":
        out.append("--security-opt=seccomp=unconfined")
    elif seccomp not in (None, "RuntimeDefault"):
        sys.exit(f"seccompProfile {seccomp}: no podman equivalent here")
    if sc.get("readOnlyRootFilesystem"):
        out.append("--read-only")
    if "runAsUser" in sc:
        out.append(f"--user={sc['runAsUser']}")
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for m in c.get("volumeMounts", []):
        v = volumes[m["name"]]
        if "hostPath" in v:
            out.append(f"--volume={v['hostPath']['path']}:{m['mountPath']}" + (":ro" if m.get("readOnly") else ""))
    return out


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("check", "podman-args", "capabilities"):
        sys.exit(__doc__)
    docs = load(sys.argv[2])
    if sys.argv[1] == "check":
        try:
            problems = check(docs)
        except (KeyError, IndexError, TypeError, AttributeError) as e:
            problems = [f"malformed: a required field is missing or of the wrong type ({e!r})"]
        for p in problems:
            print(f"{sys.argv[2]}: {p}", file=sys.stderr)
        sys.exit(1 if problems else 0)
    if sys.argv[1] == "podman-args":
        print("\n".join(podman_args(docs)))
    else:
        caps = agent_container(daemonset(docs)["spec"]["template"]["spec"]).get("securityContext", {}).get("capabilities", {})
        print("\n".join("CAP_" + x for x in caps.get("add", [])))


if __name__ == "__main__":
    main()
