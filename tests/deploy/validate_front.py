"""The nginx front of the shipped deployments, for validate_deploy.py (ctest deploy.validate).

Debian 12's gRPC 1.51 cannot bound an HTTP/2 CONTINUATION flood in-process (docs/SECURITY.md), so
the Kubernetes Deployment and the compose file run dvexport-server behind nginx sidecars of the
same image (deploy/nginx/dvexport-nginx renders the tested configurations). Checked here:
  - the server listens on 127.0.0.1 only, gRPC and HTTP door (metrics may stay its own);
  - one sidecar "dvexport-nginx grpc LISTEN SERVER" whose SERVER is the server's --listen, one
    "dvexport-nginx http LISTEN SERVER_HTTP DHIS2" whose SERVER_HTTP is its --http_listen, their
    LISTEN ports the ones the Deployment declares and compose publishes;
  - the probes and the Service (headless: clients use the containers' own ports) reach nginx;
  - each sidecar runs as uid 10001, non-root, read-only root filesystem, no privilege escalation,
    no capabilities, /tmp writable (an emptyDir or a tmpfs), with resources;
  - the lines dvexport-nginx replaces are in the tested files exactly once, and the image holds
    nginx, the two files and dvexport-nginx.
"""

import re

NGINX_COMMAND = ["dvexport-nginx"]
# dvexport-nginx's kinds, and how many arguments follow the kind.
KINDS = {"grpc": 2, "http": 3}
CONFS = {"grpc": "dvexport.conf", "http": "dhis2-dataValueSets.conf"}


def flag(args, name):
    """The value of --name=value in a list of arguments, or None."""
    values = [a.split("=", 1)[1] for a in args if a.startswith(f"--{name}=")]
    return values[-1] if values else None


def port_of(address):
    return int(address.rsplit(":", 1)[1]) if address and ":" in address else None


def check_loopback(args, where, check):
    """The server's gRPC and HTTP door on 127.0.0.1; returns (grpc address, http address)."""
    listen, http = flag(args, "listen"), flag(args, "http_listen")
    for name, address in (("--listen", listen), ("--http_listen", http)):
        check(address is not None and re.match(r"^127\.0\.0\.1:\d+$", address),
              f"{where}: the server's {name} must be 127.0.0.1:PORT (nginx in front), "
              f"not {address}")
    return listen, http


def sidecars(entries, where, check):
    """{kind: (name, [listen, upstream...])} of the nginx sidecars among (name, command, args)."""
    found = {}
    for name, command, args in entries:
        if command != NGINX_COMMAND:
            continue
        args = [str(a) for a in args]
        kind = args[0] if args else None
        if check(kind in KINDS and len(args) == KINDS[kind] + 1,
                 f"{where}: {name} runs dvexport-nginx with {args}, not grpc|http and its "
                 "addresses"):
            check(kind not in found, f"{where}: two {kind} sidecars")
            found[kind] = (name, args[1:])
    for kind in KINDS:
        check(kind in found, f"{where}: no nginx sidecar \"dvexport-nginx {kind} ...\"")
    return found


def check_upstreams(found, listen, http, where, check):
    """The sidecars forward to the server's loopback addresses and listen elsewhere."""
    if "grpc" in found:
        name, (port, upstream) = found["grpc"]
        check(upstream == listen, f"{where}: {name} forwards to {upstream}, the server listens "
              f"on {listen}")
        check(str(port) != str(port_of(listen)), f"{where}: {name} listens on the server's port")
    if "http" in found:
        name, (port, upstream, _dhis2) = found["http"]
        check(upstream == http, f"{where}: {name} forwards to {upstream}, the server's HTTP door "
              f"is {http}")
        check(str(port) != str(port_of(http)), f"{where}: {name} listens on the server's port")


def check_k8s_security(container, pod, volumes, where, check):
    """A container of the Deployment (the server's or a sidecar's) as the image runs."""
    security = container.get("securityContext", {})
    pod_security = pod.get("securityContext", {})
    check(security.get("runAsUser", pod_security.get("runAsUser")) == 10001,
          f"{where}: must run as uid 10001")
    check(security.get("runAsNonRoot", pod_security.get("runAsNonRoot")) is True,
          f"{where}: runAsNonRoot must be true")
    check(security.get("readOnlyRootFilesystem") is True,
          f"{where}: readOnlyRootFilesystem must be true")
    check(security.get("allowPrivilegeEscalation") is False,
          f"{where}: allowPrivilegeEscalation must be false")
    check(security.get("capabilities", {}).get("drop") == ["ALL"],
          f"{where}: capabilities.drop must be [ALL]")
    tmp = [m["name"] for m in container.get("volumeMounts", []) if m.get("mountPath") == "/tmp"]
    check(len(tmp) == 1 and "emptyDir" in volumes.get(tmp[0], {}),
          f"{where}: /tmp must be an emptyDir (the only writable path: nginx's pid and "
          "temporary files)")
    resources = container.get("resources", {})
    check(all(r in resources.get(s, {}) for s in ("requests", "limits") for r in ("cpu", "memory")),
          f"{where}: resources requests and limits of cpu and memory (the HPA needs the requests)")


def probe_port(probe, ports):
    """The port a probe's grpc, tcpSocket or httpGet reaches, a name resolved through ports."""
    for kind in ("grpc", "tcpSocket", "httpGet"):
        if kind in probe:
            port = probe[kind].get("port")
            return ports.get(port, port)
    return None


def check_kubernetes_front(pod, server, service, where, check):
    """The Deployment's pod spec "pod", its server container and the Service."""
    listen, http = check_loopback(server.get("args", []), where, check)
    containers = {c["name"]: c for c in pod["containers"]}
    entries = [(c["name"], c.get("command"), c.get("args", [])) for c in containers.values()]
    found = sidecars(entries, where, check)
    check_upstreams(found, listen, http, where, check)
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    nginx_ports = {}
    for kind, (name, args) in found.items():
        container = containers[name]
        ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
        check(ports.get(kind) == int(args[0]),
              f"{where}: {name} must declare its listen port {args[0]} as the port named {kind}")
        nginx_ports[kind] = int(args[0])
        for probe in ("readinessProbe", "livenessProbe"):
            check(probe_port(container.get(probe, {}), ports) == int(args[0]),
                  f"{where}: {name}'s {probe} must reach its own port {args[0]}")
        check_k8s_security(container, pod, volumes, f"{where}: {name}", check)
    for probe in ("readinessProbe", "livenessProbe"):
        grpc_probe = server.get(probe, {}).get("grpc")
        check(grpc_probe is not None and grpc_probe.get("port") == nginx_ports.get("grpc"),
              f"{where}: the server's {probe} must be a native gRPC probe on nginx's gRPC port "
              f"{nginx_ports.get('grpc')} (the kubelet cannot reach the server's loopback)")
    all_ports = {p["name"]: p["containerPort"] for c in containers.values()
                 for p in c.get("ports", [])}
    service_ports = {p["name"]: p for p in service["spec"]["ports"]}
    for kind, port in nginx_ports.items():
        entry = service_ports.get(kind)
        if check(entry is not None, f"Service: no port named {kind} (nginx's)"):
            target = all_ports.get(entry.get("targetPort"), entry.get("targetPort"))
            check(target == port and entry["port"] == port,
                  f"Service: {kind} must be nginx's port {port} (port and targetPort: a headless "
                  f"Service maps no port), not {entry['port']} -> {target}")
    for entry in service["spec"]["ports"]:
        target = all_ports.get(entry.get("targetPort"), entry.get("targetPort"))
        check(target not in (port_of(listen), port_of(http)),
              f"Service: {entry['name']} reaches the server's loopback port {target}")


def check_compose_front(services, where, check):
    server = services["server"]
    listen, http = check_loopback(server.get("command", []), where, check)
    entries = [(n, s.get("entrypoint"), s.get("command", [])) for n, s in services.items()]
    found = sidecars(entries, where, check)
    check_upstreams(found, listen, http, where, check)
    published = {str(p).split(":")[-1] for p in server.get("ports", [])}
    for kind, (name, args) in found.items():
        service = services[name]
        check(service.get("network_mode") == "service:server",
              f"{where}: {name} must share the server's network (network_mode: service:server)")
        check(str(args[0]) in published,
              f"{where}: the server service must publish {name}'s port {args[0]}")
        check(service.get("read_only") is True and "/tmp" in service.get("tmpfs", []),
              f"{where}: {name} needs read_only: true and a tmpfs on /tmp")
        check(str(service.get("user", "10001")).split(":")[0] == "10001",
              f"{where}: {name} runs as the image's user 10001")
    for port in (port_of(listen), port_of(http)):
        check(str(port) not in published, f"{where}: publishes the server's loopback port {port}")


def check_renderer(root, check):
    """deploy/nginx/dvexport-nginx replaces lines the tested files hold exactly once."""
    nginx = root / "deploy" / "nginx"
    script = nginx / "dvexport-nginx"
    if not check(script.is_file(), "deploy/nginx/dvexport-nginx missing"):
        return
    text = script.read_text()
    for kind, conf in CONFS.items():
        block = re.search(rf"^\s*{kind}\)\n(.*?);;", text, re.S | re.M)
        if not check(block and conf in block.group(1),
                     f"dvexport-nginx: no {kind}) case for {conf}"):
            continue
        conf_text = (nginx / conf).read_text()
        for line in re.findall(r'replace_once "([^"]+)"', block.group(1)):
            check(conf_text.count(line) == 1,
                  f"dvexport-nginx: deploy/nginx/{conf} holds \"{line}\" "
                  f"{conf_text.count(line)} times, not once")


def check_dockerfile_front(runtime_text, check):
    check(re.search(r"apt-get install [^&]*\bnginx\b", runtime_text),
          "Dockerfile: the runtime stage installs Debian's nginx (the sidecar)")
    for name in ("deploy/nginx/dvexport.conf", "deploy/nginx/dhis2-dataValueSets.conf",
                 "deploy/nginx/dvexport-nginx"):
        check(re.search(rf"^COPY [^\n]*{re.escape(name)}", runtime_text, re.M),
              f"Dockerfile: the runtime stage copies {name}")
