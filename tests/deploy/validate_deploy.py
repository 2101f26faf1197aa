#!/usr/bin/env python3
"""Checks the deployment files under deploy/ without a cluster or a Docker engine.

Every YAML file must parse; the Kubernetes manifests, the compose file, the
Dockerfile and the ghz configs must hold what running them needs: matching
selectors and labels, consistent ports, probes, security settings, resources,
server flags that dvexport-server defines, and ghz calls and request fields
that exist in the proto. The compose PostgreSQL must be able to keep change
streams: wal_level=logical, max_slot_wal_keep_size set, a REPLICATION reader
role and the publication "dvexport" on datavalue alone.

With binaries after the root (the server, the CLI, the load generator as built), every
shared library they name (ELF NEEDED) must come from a package the Dockerfile's runtime
stage installs, or from one of Debian's required packages that debian:12-slim holds.

Usage: validate_deploy.py REPO_ROOT [BINARY ...]
"""

import json
import pathlib
import re
import subprocess
import sys

import yaml

from validate_front import (check_compose_front, check_dockerfile_front, check_k8s_security,
                            check_kubernetes_front, check_renderer)

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
BINARIES = [pathlib.Path(p) for p in sys.argv[2:]]
DEPLOY = ROOT / "deploy"
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def server_flags():
    """The flag names dvexport-server defines (ABSL_FLAG in service/server)."""
    names = set()
    for source in (ROOT / "service" / "server").glob("*.cc"):
        names.update(re.findall(r"ABSL_FLAG\(\s*[\w:<> ]+,\s*(\w+)\s*,", source.read_text()))
    return names


FLAGS = server_flags()


def check_cli_command(command, where):
    """A healthcheck that runs the dvexport CLI must name one of its commands."""
    if not command or command[0] != "dvexport":
        return
    sources = "".join(p.read_text() for p in (ROOT / "client" / "cli").glob("*.cc"))
    check(len(command) > 1 and f'{{"{command[1]}",' in sources,
          f"{where}: dvexport has no command {command[1:2]}")


def check_server_args(args, where):
    for arg in args:
        match = re.match(r"--([a-z_]+)(=|$)", arg)
        if check(match, f"{where}: argument {arg!r} is not a --flag=value"):
            check(match.group(1) in FLAGS,
                  f"{where}: --{match.group(1)} is not a dvexport-server flag ({sorted(FLAGS)})")


# ---------------------------------------------------------------- the proto

def parse_proto():
    text = (ROOT / "proto" / "dvexport" / "v1" / "export.proto").read_text()
    text = re.sub(r"//[^\n]*", "", text)
    package = re.search(r"^\s*package\s+([\w.]+)\s*;", text, re.M).group(1)
    rpcs = {}
    for service, body in re.findall(r"service\s+(\w+)\s*\{(.*?)\n\}", text, re.S):
        for name, request, stream, response in re.findall(
                r"rpc\s+(\w+)\s*\(\s*([\w.]+)\s*\)\s*returns\s*\(\s*(stream\s+)?([\w.]+)\s*\)", body):
            rpcs[f"{package}.{service}.{name}"] = (request, bool(stream), response)
    messages = {}
    for name, body in re.findall(r"^message\s+(\w+)\s*\{(.*?)^\}", text, re.S | re.M):
        fields = {}
        for _label, ftype, fname in re.findall(
                r"^\s*(repeated\s+|optional\s+)?([\w.]+)\s+(\w+)\s*=\s*\d+\s*;", body, re.M):
            fields[fname] = ftype
        messages[name] = fields
    enums = {}
    for name, body in re.findall(r"^enum\s+(\w+)\s*\{(.*?)^\}", text, re.S | re.M):
        enums[name] = set(re.findall(r"^\s*(\w+)\s*=", body, re.M))
    return rpcs, messages, enums


RPCS, MESSAGES, ENUMS = parse_proto()


def lower_camel(name):
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def check_message_json(value, message, where):
    """"value" must be protobuf JSON for "message": lowerCamelCase field names."""
    fields = MESSAGES.get(message)
    if not check(fields is not None, f"{where}: unknown message {message}"):
        return
    if not check(isinstance(value, dict), f"{where}: {message} must be a JSON object"):
        return
    by_json = {lower_camel(name): ftype for name, ftype in fields.items()}
    for key, item in value.items():
        if not check(key in by_json, f"{where}: {key!r} is not a JSON field of {message} "
                     f"(names are lowerCamelCase: {sorted(by_json)})"):
            continue
        ftype = by_json[key]
        if ftype in MESSAGES:
            check_message_json(item, ftype, f"{where}.{key}")
        elif ftype in ENUMS:
            check(item in ENUMS[ftype] or isinstance(item, int),
                  f"{where}.{key}: {item!r} is not a {ftype} value")


# ------------------------------------------------------------------- YAML

def load_yaml_files():
    documents = {}
    for path in sorted(list(DEPLOY.rglob("*.yaml")) + list(DEPLOY.rglob("*.yml"))):
        try:
            documents[path] = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
        except yaml.YAMLError as error:
            check(False, f"{path.relative_to(ROOT)}: does not parse: {error}")
    check(documents, "no YAML files under deploy/")
    return documents


def labels_match(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def check_kubernetes(documents):
    k8s = DEPLOY / "k8s"
    by_kind = {}
    for path, docs in documents.items():
        if k8s not in path.parents or path.name == "kustomization.yaml":
            continue
        for doc in docs:
            where = f"{path.relative_to(ROOT)} ({doc.get('kind')})"
            check("apiVersion" in doc and "kind" in doc and "name" in doc.get("metadata", {}),
                  f"{where}: needs apiVersion, kind and metadata.name")
            by_kind.setdefault(doc.get("kind"), []).append((where, doc))

    expected_api = {"Deployment": "apps/v1", "Service": "v1", "PodDisruptionBudget": "policy/v1",
                    "HorizontalPodAutoscaler": "autoscaling/v2", "Secret": "v1"}
    complete = True
    for kind, api in expected_api.items():
        complete &= check(len(by_kind.get(kind, [])) == 1, f"deploy/k8s: expected one {kind}")
        for where, doc in by_kind.get(kind, []):
            check(doc["apiVersion"] == api, f"{where}: apiVersion should be {api}")
    if not complete:
        return

    where, deployment = by_kind["Deployment"][0]
    spec = deployment["spec"]
    template = spec["template"]
    labels = template["metadata"]["labels"]
    check(labels_match(spec["selector"]["matchLabels"], labels),
          f"{where}: selector.matchLabels must match the template's labels")
    pod = template["spec"]
    # The server's container (its args hold --pg); the nginx sidecars: validate_front.py.
    servers = [c for c in pod["containers"] if any(str(a).startswith("--pg=")
                                                   for a in c.get("args", []))]
    if not check(len(servers) == 1, f"{where}: one server container (args with --pg=)"):
        return
    container = servers[0]
    ports = {p["name"]: p["containerPort"] for c in pod["containers"] for p in c.get("ports", [])}
    check("grpc" in ports, f"{where}: a container port named grpc")
    # The same rules as the sidecars': uid 10001, read-only root, /tmp an emptyDir, resources.
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    check_k8s_security(container, pod, volumes, f"{where}: {container.get('name')}", check)
    args = container.get("args", [])
    check_server_args(args, where)
    env = {e["name"]: e for e in container.get("env", [])}
    for referenced in re.findall(r"\$\((\w+)\)", " ".join(args)):
        check(referenced in env, f"{where}: args use $({referenced}) but env does not define it")
    check("--pg=$(DVEXPORT_PG)" in args, f"{where}: the conninfo comes from --pg=$(DVEXPORT_PG)")
    check(not any("password" in a.lower() for a in args), f"{where}: no password in args")
    secret_where, secret = by_kind["Secret"][0]
    secret_keys = set(secret.get("stringData", {})) | set(secret.get("data", {}))
    for name in ("DVEXPORT_PG", "PGPASSWORD"):
        ref = env.get(name, {}).get("valueFrom", {}).get("secretKeyRef")
        if check(ref is not None, f"{where}: env {name} must come from a Secret"):
            check(ref["name"] == secret["metadata"]["name"] and ref["key"] in secret_keys,
                  f"{where}: env {name} refers to {ref}, not in {secret_where}")
    mounts = {m["name"] for m in container.get("volumeMounts", [])}
    volumes = {v["name"] for v in pod.get("volumes", [])}
    check(mounts <= volumes, f"{where}: volumeMounts {mounts - volumes} have no volume")

    where, service = by_kind["Service"][0]
    check_kubernetes_front(pod, container, service, f"{by_kind['Deployment'][0][0]}", check)
    check(service["spec"].get("clusterIP") == "None",
          f"{where}: headless (clusterIP: None) for client-side load balancing")
    check(labels_match(service["spec"].get("selector"), labels),
          f"{where}: selector must match the Deployment's pod labels")
    for port in service["spec"]["ports"]:
        target = port.get("targetPort", port["port"])
        check(target in ports or target in ports.values(),
              f"{where}: targetPort {target} is not a container port")
    check(any(p.get("targetPort") in ("grpc", ports.get("grpc")) for p in service["spec"]["ports"]),
          f"{where}: must expose the grpc port")

    where, pdb = by_kind["PodDisruptionBudget"][0]
    check(labels_match(pdb["spec"]["selector"]["matchLabels"], labels),
          f"{where}: selector must match the Deployment's pod labels")
    check(("minAvailable" in pdb["spec"]) != ("maxUnavailable" in pdb["spec"]),
          f"{where}: exactly one of minAvailable and maxUnavailable")

    where, hpa = by_kind["HorizontalPodAutoscaler"][0]
    target = hpa["spec"]["scaleTargetRef"]
    check(target["kind"] == "Deployment" and target["name"] == deployment["metadata"]["name"],
          f"{where}: scaleTargetRef must name the Deployment")
    check(1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"],
          f"{where}: 1 <= minReplicas <= maxReplicas")
    check(hpa["spec"].get("metrics"), f"{where}: needs metrics")
    check("cpu" in container.get("resources", {}).get("requests", {}),
          f"{where}: CPU utilization needs the container's CPU request")

    kustomization = yaml.safe_load((k8s / "kustomization.yaml").read_text())
    for resource in kustomization.get("resources", []):
        check((k8s / resource).is_file(), f"deploy/k8s/kustomization.yaml: {resource} missing")
    check("secret.example.yaml" not in kustomization.get("resources", []),
          "deploy/k8s/kustomization.yaml: must not apply the example Secret")


# ---------------------------------------------------------------- compose

def check_compose(documents):
    path = DEPLOY / "compose.yaml"
    if not check(path in documents, "deploy/compose.yaml missing"):
        return
    compose = documents[path][0]
    services = compose.get("services", {})
    if not all([check(name in services, f"compose: service {name} missing")
                for name in ("postgres", "loader", "server")]):
        return
    for name, service in services.items():
        check("image" in service or "build" in service, f"compose: {name} needs image or build")
        for dependency, condition in service.get("depends_on", {}).items():
            check(dependency in services, f"compose: {name} depends on unknown {dependency}")
            if dependency == "postgres" or condition.get("condition") == "service_healthy":
                check("healthcheck" in services.get(dependency, {}),
                      f"compose: {name} waits for {dependency} to be healthy, which has no healthcheck")
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                check((DEPLOY / source).exists(), f"compose: {name} mounts missing {source}")
            else:
                check(source in (compose.get("volumes") or {}),
                      f"compose: {name} uses undeclared volume {source}")
    loader = services["loader"]
    check(loader.get("depends_on", {}).get("postgres", {}).get("condition") == "service_healthy",
          "compose: loader must wait for a healthy postgres")
    check("load.sh" in " ".join(loader.get("entrypoint", []) + loader.get("command", []))
          and "sl" in loader.get("entrypoint", []) + loader.get("command", []),
          "compose: loader must run deploy/demo/load.sh sl")
    check(loader.get("restart", "no") == "no", "compose: the loader is a one-shot job")
    server = services["server"]
    check(server.get("depends_on", {}).get("loader", {}).get("condition")
          == "service_completed_successfully",
          "compose: server must wait for the loader to complete successfully")
    if check("healthcheck" in server, "compose: server needs a healthcheck"):
        test = server["healthcheck"].get("test", [])
        check_cli_command(test[1:] if test[:1] == ["CMD"] else [], "compose: server healthcheck")
    build = server.get("build", {})
    dockerfile = (path.parent / build.get("context", ".") / build.get("dockerfile", "Dockerfile"))
    check(dockerfile.resolve().is_file(), f"compose: server's Dockerfile {dockerfile} missing")
    check_server_args(server.get("command", []), "compose: server")
    check(not any("password" in a.lower() for a in server.get("command", [])),
          "compose: no password in the server's command line")
    published = {p.split(":")[-1] for p in server.get("ports", [])}
    check("50051" in published, "compose: server must publish 50051")
    check_compose_front(services, "compose", check)
    check_compose_postgres(services["postgres"], loader)


def postgres_settings(command):
    """{name: value} of a postgres command line's "-c name=value" and "--name=value"."""
    if isinstance(command, str):
        command = command.split()
    settings = {}
    for i, arg in enumerate(command):
        setting = None
        if arg == "-c" and i + 1 < len(command):
            setting = command[i + 1]
        elif arg.startswith("--") and "=" in arg:
            setting = arg[2:]
        if setting is not None:
            name, _, value = setting.partition("=")
            settings[name.replace("-", "_")] = value
    return settings


def check_compose_postgres(postgres, loader):
    """What change streams need of the demo's PostgreSQL (docs/DEPLOYMENT.md, "Change streams
    (logical decoding)"): the server settings, REPLICATION for the reader role (the init script)
    and the publication on datavalue (the loader's load.sh; datavalue does not exist at init)."""
    command = postgres.get("command", [])
    settings = postgres_settings(command)
    check((command.split() if isinstance(command, str) else command)[:1] == ["postgres"],
          "compose: postgres's command must start with postgres (the image's entrypoint runs it)")
    check(settings.get("wal_level") == "logical",
          "compose: postgres needs -c wal_level=logical (change streams: logical decoding)")
    for name in ("max_replication_slots", "max_wal_senders"):
        # PostgreSQL 15's default is 10 for both; set, it must leave room for a stream.
        value = settings.get(name, "10")
        check(value.isdigit() and int(value) >= 1, f"compose: postgres's {name} ({value}) below 1")
    keep = settings.get("max_slot_wal_keep_size")
    check(re.match(r"^[1-9]\d*(kB|MB|GB|TB)?$", keep or ""),
          f"compose: postgres needs -c max_slot_wal_keep_size=<size> ({keep or 'unset'}): "
          "without it a forgotten change stream's slot keeps WAL until the disk is full")
    init_scripts = [DEPLOY / v.split(":")[0] for v in postgres.get("volumes", [])
                    if isinstance(v, str) and v.startswith(".")
                    and ":/docker-entrypoint-initdb.d/" in v]
    if check(len(init_scripts) == 1 and init_scripts[0].is_file(),
             "compose: postgres mounts one init script into /docker-entrypoint-initdb.d/"):
        # Without comments, shell's and SQL's.
        text = re.sub(r"(?m)^\s*#.*$|--\s.*$", "", init_scripts[0].read_text())
        check(re.search(r"\b(CREATE|ALTER)\s+ROLE\s+dvexport_reader\b[^;]*\bREPLICATION\b",
                        text, re.I),
              f"{init_scripts[0].relative_to(ROOT)}: dvexport_reader needs REPLICATION "
              "(change streams create and read replication slots)")
    load_sh = DEPLOY / "demo" / "load.sh"
    if check(load_sh.is_file() and "./demo:/demo:ro" in loader.get("volumes", []),
             "compose: the loader runs deploy/demo/load.sh (mounted at /demo)"):
        check(re.search(r"^CREATE\s+PUBLICATION\s+dvexport\s+FOR\s+TABLE\s+"
                        r"(public\.)?datavalue\s*;", load_sh.read_text(), re.I | re.M),
              "deploy/demo/load.sh: must create the publication dvexport FOR TABLE datavalue "
              "(datavalue alone)")


# ---------------------------------------------------------------- Dockerfile

def check_dockerfile():
    path = DEPLOY / "docker" / "Dockerfile"
    if not check(path.is_file(), "deploy/docker/Dockerfile missing"):
        return
    text = re.sub(r"\\\n", " ", path.read_text())
    instructions = [line.strip() for line in text.splitlines()
                    if line.strip() and not line.strip().startswith("#")]
    stages = [i for i in instructions if i.upper().startswith("FROM ")]
    check(len(stages) >= 2, "Dockerfile: multi-stage (builder and runtime)")
    check(all(re.match(r"FROM debian:12(-slim)?( |$)", s) for s in stages),
          "Dockerfile: every stage is debian:12")
    builder = "\n".join(instructions[:instructions.index(stages[-1])])
    runtime = instructions[instructions.index(stages[-1]):]
    check("scripts/lib/deps.sh" in builder and "scripts/lib/build.sh" in builder,
          "Dockerfile: the builder installs and builds as CI does (scripts/lib)")
    runtime_text = "\n".join(runtime)
    check(not re.search(r"\b\S+-dev\b", runtime_text), "Dockerfile: no -dev package at runtime")
    check_dockerfile_front(runtime_text, check)
    check(re.search(r"^COPY --from=", runtime_text, re.M), "Dockerfile: runtime copies from builder")
    users = [i.split()[1] for i in runtime if i.upper().startswith("USER ")]
    check(users and re.match(r"^[1-9]\d*(:\d+)?$", users[-1]),
          "Dockerfile: runtime USER must be a numeric non-root uid")
    entrypoints = [i for i in runtime if i.upper().startswith("ENTRYPOINT ")]
    if check(entrypoints, "Dockerfile: ENTRYPOINT missing"):
        entry = json.loads(entrypoints[-1].split(None, 1)[1])
        check(entry[0].endswith("dvexport-server"), "Dockerfile: ENTRYPOINT is dvexport-server")
    cmds = [i for i in runtime if i.upper().startswith("CMD ")]
    if cmds:
        check_server_args(json.loads(cmds[-1].split(None, 1)[1]), "Dockerfile CMD")
    healthchecks = [i for i in runtime if i.upper().startswith("HEALTHCHECK ")]
    if check(healthchecks, "Dockerfile: HEALTHCHECK"):
        command = re.search(r"\bCMD\s+(\[.*\])\s*$", healthchecks[-1])
        if check(command, "Dockerfile: HEALTHCHECK CMD in exec (JSON) form"):
            check_cli_command(json.loads(command.group(1)), "Dockerfile HEALTHCHECK")
    exposed = set()
    for i in runtime:
        if i.upper().startswith("EXPOSE "):
            exposed.update(p.split("/")[0] for p in i.split()[1:])
    check("50051" in exposed, "Dockerfile: EXPOSE 50051")
    check((ROOT / ".dockerignore").is_file(), ".dockerignore missing")
    installs = re.search(r"apt-get install ([^&\n]*)", runtime_text)
    if check(installs, "Dockerfile: the runtime stage installs its libraries with apt-get"):
        check_runtime_libraries({w for w in installs.group(1).split() if not w.startswith("-")})


# Debian 12's packages of priority "required" that binaries link (debian:12-slim has them).
BASE_PACKAGES = {"libc6", "libgcc-s1", "libstdc++6", "libcrypt1", "zlib1g"}
# The sanitizer builds' runtimes (ctest also runs this in build-asan): never in the image.
SANITIZER_RUNTIME = re.compile(r"^lib(asan|ubsan|tsan|lsan)\.so")


def path_names(path):
    """The names dpkg may know "path" under: Debian 12's merged /usr gives each library a /lib
    and a /usr/lib name, and dpkg records the link or its target."""
    names = []
    for name in (path, str(pathlib.Path(path).resolve())):
        names += [name, re.sub(r"^/usr/", "/", name), re.sub(r"^/lib", "/usr/lib", name)]
    return list(dict.fromkeys(names))


def packages_owning(paths):
    """{path: Debian package} for each of "paths" that a package holds, from one dpkg -S (which
    reads every package's file list: once, not once per library)."""
    names = {name: path for path in paths for name in path_names(path)}
    found = subprocess.run(["dpkg", "-S", *names], capture_output=True, text=True).stdout
    owners = {}
    for line in found.splitlines():
        package, _, name = line.partition(": ")
        if name in names:
            owners.setdefault(names[name], package.split(":")[0])
    return owners


def with_dependencies(packages):
    """"packages" and what they depend on, recursively, as dpkg records it here (what apt-get
    install brings along in the image), from one dpkg-query of every installed package."""
    listing = subprocess.run(["dpkg-query", "-W", "-f", "${Package}\t${Depends},${Pre-Depends}\n"],
                             capture_output=True, text=True).stdout
    depends = {}
    for line in listing.splitlines():
        package, _, alternatives = line.partition("\t")
        depends[package] = [a.split("|")[0].split("(")[0].split(":")[0].strip()
                            for a in alternatives.split(",")]
    closure, todo = set(), list(packages)
    while todo:
        package = todo.pop()
        if package and package not in closure:
            closure.add(package)
            todo += depends.get(package, [])
    return closure


def check_runtime_libraries(runtime_packages):
    """Each NEEDED library of BINARIES, resolved as ldd resolves it, is in a runtime package."""
    runtime_packages = with_dependencies(runtime_packages)
    needs = []  # (binary, library, path)
    for binary in BINARIES:
        if not check(binary.is_file(), f"runtime libraries: {binary} missing"):
            continue
        dynamic = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True,
                                 check=True).stdout
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
        resolved = dict(re.findall(r"^\s*(\S+) => (/\S+)", subprocess.run(
            ["ldd", str(binary)], capture_output=True, text=True, check=True).stdout, re.M))
        for name in needed:
            if SANITIZER_RUNTIME.match(name) or name.startswith("ld-linux"):
                continue
            path = resolved.get(name)
            if check(path, f"runtime libraries: {binary.name} needs {name}, not found"):
                needs.append((binary, name, path))
    owners = packages_owning({path for _, _, path in needs})
    for binary, name, path in needs:
        package = owners.get(path)
        if not check(package, f"runtime libraries: no Debian package holds {path} ({name})"):
            continue
        check(package in runtime_packages or package in BASE_PACKAGES,
              f"Dockerfile: the runtime stage must install {package}: "
              f"{binary.name} needs {name}")


# ---------------------------------------------------------------- ghz

GHZ_KEYS = {"proto", "protoset", "import-paths", "call", "host", "insecure", "total",
            "concurrency", "connections", "timeout", "data", "metadata", "max-duration",
            "duration", "connect-timeout", "keepalive", "rps", "skipFirst",
            "max-recv-message-size", "max-send-message-size", "name", "tags", "format",
            "output", "load-schedule", "load-start", "load-end", "load-step",
            "load-step-duration", "load-max-duration", "concurrency-schedule",
            "concurrency-start", "concurrency-end", "concurrency-step",
            "concurrency-step-duration", "concurrency-max-duration", "cpus", "reflect-metadata",
            "count-errors", "stream-interval", "stream-call-duration", "stream-call-count",
            "authority", "cname", "cacert", "cert", "key", "skipTLS", "async", "lb-strategy"}


# RPCs no ghz config calls: they manage change streams (list the caller's replication slots,
# drop one), an operator's occasional calls rather than export traffic, and dvexport-load, which
# reads the same configs, runs exports and counts only.
NOT_LOAD_TESTED = {"dvexport.v1.DataValueExport.ListChangeStreams",
                   "dvexport.v1.DataValueExport.DropChangeStream"}


def check_ghz():
    configs = sorted((DEPLOY / "ghz").glob("*.json"))
    check(len(configs) >= 4, "deploy/ghz: expected at least four configs")
    load_testing = (ROOT / "docs" / "LOAD-TESTING.md").read_text()
    calls = set()
    for path in configs:
        where = str(path.relative_to(ROOT))
        try:
            config = json.loads(path.read_text())
        except json.JSONDecodeError as error:
            check(False, f"{where}: not JSON: {error}")
            continue
        unknown = set(config) - GHZ_KEYS
        check(not unknown, f"{where}: not ghz options: {sorted(unknown)}")
        for key in ("call", "host", "insecure", "total", "concurrency", "timeout", "data"):
            check(key in config, f"{where}: {key} missing")
        call = config.get("call", "").replace("/", ".")
        calls.add(call)
        if check(call in RPCS, f"{where}: {call} is not an rpc of the proto ({sorted(RPCS)})"):
            check_message_json(config.get("data"), RPCS[call][0], f"{where}: data")
        check(re.match(r"^\d+(ms|s|m)$", str(config.get("timeout", ""))),
              f"{where}: timeout must be a duration such as 60s (it covers the whole stream)")
        check(config.get("concurrency", 0) <= config.get("total", 0),
              f"{where}: concurrency above total")
        check(config.get("host", "").startswith(("127.0.0.1:", "localhost:")),
              f"{where}: the default target is this machine")
        # docs/LOAD-TESTING.md's table of configs says what the config does.
        sizes = (f"{config.get('total')} / {config.get('concurrency')} / "
                 f"{config.get('connections', 1)}")
        rows = [line for line in load_testing.splitlines()
                if line.startswith(f"| `{path.name}` |")]
        check(len(rows) == 1, f"docs/LOAD-TESTING.md: no row for {path.name} in the configs table")
        check(all(f"| {sizes} |" in row for row in rows),
              f"docs/LOAD-TESTING.md: {path.name} is not \"{sizes}\" (total / concurrency / "
              "connections) as in the config")
    for rpc in RPCS:
        check(rpc in calls or rpc in NOT_LOAD_TESTED, f"deploy/ghz: no config calls {rpc}")
    for rpc in NOT_LOAD_TESTED:
        check(rpc in RPCS,
              f"validate_deploy.py: NOT_LOAD_TESTED names {rpc}, not an rpc of the proto")
        check(rpc not in calls, f"deploy/ghz: a config calls {rpc}, which NOT_LOAD_TESTED exempts")


def main():
    documents = load_yaml_files()
    check_kubernetes(documents)
    check_compose(documents)
    check_dockerfile()
    check_ghz()
    check_renderer(ROOT, check)
    for failure in failures:
        print(f"FAIL: {failure}")
    files = len(documents) + len(list((DEPLOY / "ghz").glob("*.json"))) + 1
    print(f"validate_deploy: {files} files, {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
