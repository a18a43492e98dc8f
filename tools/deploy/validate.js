// SPDX-License-Identifier: BSD-3-Clause
// Validates Kubernetes manifests against Kubernetes' OpenAPI schema, as the npm
// package kubernetes-models ships it (one ajv validator per kind), and checks the
// DaemonSet's least-privilege promises. Used by tests/net/test_agent_deploy.sh:
//
//   NODE_PATH=DIR/node_modules node validate.js FILE.yaml [--expect-invalid]
//
// Prints one line per document ("ok KIND NAME" or "invalid KIND NAME: why") and exits
// 0 when every document is valid (with --expect-invalid: when at least one is not).
"use strict";
const fs = require("fs");
const YAML = require("yaml");

const kinds = {
	"v1/ConfigMap": () => require("kubernetes-models/v1/ConfigMap").ConfigMap,
	"v1/Pod": () => require("kubernetes-models/v1/Pod").Pod,
	"apps/v1/DaemonSet": () => require("kubernetes-models/apps/v1/DaemonSet").DaemonSet,
};

function leastPrivilege(doc) {
	const problems = [];
	const spec = doc.spec.template.spec;
	for (const c of spec.containers) {
		const sc = c.securityContext || {};
		const caps = (sc.capabilities || {}).add || [];
		if (sc.privileged) problems.push(`${c.name}: privileged`);
		if (sc.allowPrivilegeEscalation !== false) problems.push(`${c.name}: privilege escalation allowed`);
		if (JSON.stringify((sc.capabilities || {}).drop) !== '["ALL"]') problems.push(`${c.name}: does not drop ALL`);
		if (JSON.stringify([...caps].sort()) !== '["BPF","NET_ADMIN","PERFMON"]')
			problems.push(`${c.name}: capabilities ${JSON.stringify(caps)}, want BPF, NET_ADMIN, PERFMON`);
		if (!c.livenessProbe || c.livenessProbe.httpGet.path !== "/healthz") problems.push(`${c.name}: no /healthz liveness probe`);
		if (!c.readinessProbe || c.readinessProbe.httpGet.path !== "/readyz") problems.push(`${c.name}: no /readyz readiness probe`);
	}
	if (!spec.hostNetwork) problems.push("not hostNetwork");
	const ann = doc.spec.template.metadata.annotations || {};
	if (ann["prometheus.io/scrape"] !== "true") problems.push("no prometheus.io/scrape annotation");
	const paths = spec.volumes.filter((v) => v.hostPath).map((v) => v.hostPath.path).sort();
	if (JSON.stringify(paths) !== '["/run/xpile","/sys/fs/bpf","/tmp/afxdp_dp"]')
		problems.push(`hostPath volumes ${JSON.stringify(paths)}`);
	return problems;
}

const file = process.argv[2];
const expectInvalid = process.argv.includes("--expect-invalid");
const docs = YAML.parseAllDocuments(fs.readFileSync(file, "utf8"));
let bad = 0;
for (const d of docs) {
	if (d.errors.length) {
		console.log(`invalid YAML: ${d.errors[0].message.split("\n")[0]}`);
		bad++;
		continue;
	}
	const doc = d.toJS();
	if (!doc) continue;
	const key = `${doc.apiVersion}/${doc.kind}`;
	const name = (doc.metadata || {}).name;
	if (!kinds[key]) {
		console.log(`invalid ${key} ${name}: no schema for this kind here`);
		bad++;
		continue;
	}
	try {
		const Model = kinds[key]();
		new Model(doc).validate();
		const extra = key === "apps/v1/DaemonSet" ? leastPrivilege(doc) : [];
		if (extra.length) throw new Error(extra.join("; "));
		console.log(`ok ${doc.kind} ${name}`);
	} catch (e) {
		console.log(`invalid ${doc.kind} ${name}: ${String(e.message).split("\n").slice(0, 3).join(" | ")}`);
		bad++;
	}
}
process.exit(expectInvalid ? (bad ? 0 : 1) : bad ? 1 : 0);
