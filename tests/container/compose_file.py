#!/usr/bin/env python3
"""deploy/compose.yaml as tests/container/compose_test.sh runs it with podman-compose 1.0.3.

  compose_file.py render REPO OUT DEMO
      A copy of deploy/compose.yaml at OUT with two changes: its relative paths made absolute
      (the copy lives elsewhere), and the loader's demo DEMO (small, or sl as shipped: about
      1,000,000 values). Everything else as shipped.
  compose_file.py sidecar COMPOSE SERVICE
      The "podman run" options of SERVICE (nginx-grpc or nginx-http) of COMPOSE, ${VAR:-default}
      read from the environment as compose does, one a line, its image and command last:
      podman-compose 1.0.3 cannot run network_mode "service:server" (it passes it to podman
      verbatim next to its own --net), so the test starts the sidecars itself in the server's
      network namespace, with the options the compose file gives them: read_only, tmpfs,
      security_opt, entrypoint, healthcheck, image, command.
"""

import json
import os
import pathlib
import re
import sys

import yaml


def render(repo, out, demo):
    deploy = pathlib.Path(repo).resolve() / "deploy"
    compose = yaml.safe_load((deploy / "compose.yaml").read_text())
    for service in compose["services"].values():
        volumes = []
        for volume in service.get("volumes", []):
            if volume.startswith("."):
                source, rest = volume.split(":", 1)
                volume = f"{(deploy / source).resolve()}:{rest}"
            volumes.append(volume)
        if volumes:
            service["volumes"] = volumes
        if "build" in service:
            service["build"]["context"] = str((deploy / service["build"]["context"]).resolve())
    loader = compose["services"]["loader"]["entrypoint"]
    assert loader[-1] == "sl", loader
    loader[-1] = demo
    pathlib.Path(out).write_text(yaml.safe_dump(compose, sort_keys=False))


def interpolate(value):
    """Compose's ${VAR:-default} and ${VAR} in the strings of "value"."""
    if isinstance(value, str):
        return re.sub(r"\$\{(\w+)(?::-([^}]*))?\}",
                      lambda m: os.environ.get(m.group(1)) or (m.group(2) or ""), value)
    if isinstance(value, list):
        return [interpolate(v) for v in value]
    if isinstance(value, dict):
        return {k: interpolate(v) for k, v in value.items()}
    return value


def sidecar(compose, name):
    service = interpolate(yaml.safe_load(pathlib.Path(compose).read_text())["services"][name])
    options = []
    if service.get("read_only"):
        options.append("--read-only")
    options += [f"--tmpfs={t}" for t in service.get("tmpfs", [])]
    options += [f"--security-opt={s}" for s in service.get("security_opt", [])]
    options.append("--entrypoint=" + json.dumps(service["entrypoint"]))
    test = service.get("healthcheck", {}).get("test")
    if test:
        # podman 4.3 reads a JSON array without the leading "CMD" as exec form (with it, it
        # splits the JSON text at spaces), and a string as CMD-SHELL.
        kind, *command = test
        assert kind in ("CMD", "CMD-SHELL"), test
        options.append("--health-cmd=" + (json.dumps(command) if kind == "CMD" else command[0]))
    options.append(service["image"])
    options += [str(a) for a in service.get("command", [])]
    print("\n".join(options))


def main(argv):
    if argv[1] == "render":
        render(*argv[2:5])
    elif argv[1] == "sidecar":
        sidecar(*argv[2:4])
    else:
        raise SystemExit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
