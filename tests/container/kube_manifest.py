#!/usr/bin/env python3
"""deploy/k8s's Deployment and Service as tests/container/kube_test.sh plays them with podman 4.3.

Only what podman on one machine needs is changed, each for the reason given:
  - the image: the one just built (IMAGE);
  - replicas: 1 (podman starts every replica as a pod of its own, all on the host's network);
  - hostNetwork: true (the test PostgreSQL listens on the host's loopback), and so no
    ports: podman 4.3 refuses port mappings on the host network ("PortMappings can only be used
    with Bridge or slirp4netns networking"); the probes' named ports become their numbers;
  - nginx-http's DHIS2 address: DHIS2 (the stand-in the test runs);
  - "$(NAME)" in args expanded from the container's env, as the kubelet does (podman 4.3 passes
    "--pg=$(DVEXPORT_PG)" on verbatim): env from the Secret takes SECRET_VALUES' value.
The Secret is not played: podman 4.3 makes a podman secret of a kind: Secret that its own
secretKeyRef cannot read (it expects JSON of base64 values); OUT_DIR/secret.json is the Secret in
that form, for "podman secret create", with secret.example.yaml's keys (each must have a value
in SECRET_VALUES). HPA and PDB are not played (podman has no such kinds): deploy.validate lints
them.

Usage: kube_manifest.py REPO IMAGE DHIS2_ADDRESS SECRET_VALUES OUT_DIR
SECRET_VALUES: a JSON file {key: value}. Writes OUT_DIR/kube.yaml (Service and Deployment),
OUT_DIR/secret.json, and OUT_DIR/probes.tsv: one line per probe, container,
readinessProbe|livenessProbe, kind (grpc, tcpSocket, httpGet, exec), port (a number; - for
exec), initialDelaySeconds, timeoutSeconds.
"""

import base64
import json
import pathlib
import re
import sys

import yaml

PROBE_KINDS = ("grpc", "tcpSocket", "httpGet", "exec")


def main(argv):
    repo, image, dhis2, values_path, out_dir = argv[1:6]
    out = pathlib.Path(out_dir)
    k8s = pathlib.Path(repo) / "deploy" / "k8s"
    deployment = yaml.safe_load((k8s / "deployment.yaml").read_text())
    service = yaml.safe_load((k8s / "service.yaml").read_text())
    secret = yaml.safe_load((k8s / "secret.example.yaml").read_text())
    values = json.loads(pathlib.Path(values_path).read_text())
    keys = sorted(set(secret.get("stringData", {})) | set(secret.get("data", {})))
    missing = [k for k in keys if k not in values]
    if missing:
        raise SystemExit(f"secret.example.yaml has keys {missing}: the test gives no value")
    (out / "secret.json").write_text(json.dumps(
        {k: base64.b64encode(values[k].encode()).decode() for k in keys}))

    deployment["spec"]["replicas"] = 1
    pod = deployment["spec"]["template"]["spec"]
    pod["hostNetwork"] = True
    probes = []
    for container in pod["containers"]:
        container["image"] = image
        named = {p["name"]: p["containerPort"] for p in container.pop("ports", [])}
        if container["name"] == "nginx-http":
            container["args"][3] = dhis2
        env = {}
        for entry in container.get("env", []):
            ref = entry.get("valueFrom", {}).get("secretKeyRef", {})
            if ref.get("name") == secret["metadata"]["name"]:
                env[entry["name"]] = values[ref["key"]]
            elif "value" in entry:
                env[entry["name"]] = entry["value"]
        container["args"] = [re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], str(a))
                             for a in container.get("args", [])]
        for probe_name in ("readinessProbe", "livenessProbe"):
            probe = container.get(probe_name)
            if probe is None:
                continue
            kind = next(k for k in PROBE_KINDS if k in probe)
            port = "-"
            if kind != "exec":
                port = probe[kind]["port"]
                port = probe[kind]["port"] = named.get(port, port)
            probes.append([container["name"], probe_name, kind, str(port),
                           str(probe.get("initialDelaySeconds", 0)),
                           str(probe.get("timeoutSeconds", 1))])
    (out / "kube.yaml").write_text(yaml.safe_dump_all([service, deployment], sort_keys=False))
    (out / "probes.tsv").write_text("".join("\t".join(p) + "\n" for p in probes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
