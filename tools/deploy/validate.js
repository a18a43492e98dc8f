// SPDX-License-Identifier: BSD-3-Clause
// Validates Kubernetes manifests against Kubernetes' OpenAPI schema, as the npm
// package kubernetes-models ships it (one ajv validator per kind), checks the
// DaemonSet's least-privilege promises, that the device-plugin sockets are closed to
// other users (mode 0660, a group the pods hold), every Pod against the PodSecurity
// "restricted" rules (Kubernetes' Pod Security Standards, v1.25+), and a
// NetworkAttachmentDefinition's CNI config (no schema ships for that CRD). The
// dependencies are declared beside it (package.json, package-lock.json);
// tests/net/test_agent_deploy.sh installs them with `npm ci` and runs:
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

// The device-plugin sockets' group (from the ConfigMap's agent.json): the DaemonSet's
// pods must hold it to give it to them.
let dpGroup = null;

function socketsClosed(doc) {
	const problems = [];
	let cfg;
	try {
		cfg = JSON.parse((doc.data || {})["agent.json"]);
	} catch (e) {
		return [`agent.json: ${e.message}`];
	}
	const dp = cfg.device_plugin || {};
	// The agent's default mode is 0660; "others" must never reach an XSKMAP.
	if (dp.mode !== undefined && parseInt(dp.mode, 8) & 0o007)
		problems.push(`device_plugin.mode ${dp.mode} lets any local user connect; use 0660 and a group`);
	if (dp.group === undefined) problems.push("device_plugin.group missing: the engine pods need one");
	dpGroup = dp.group;
	return problems;
}

function leastPrivilege(doc) {
	const problems = [];
	const spec = doc.spec.template.spec;
	const groups = (spec.securityContext || {}).supplementalGroups || [];
	if (dpGroup !== null && !groups.includes(dpGroup))
		problems.push(`pods do not hold the device-plugin group ${dpGroup} (securityContext.supplementalGroups)`);
	for (const c of spec.containers) {
		const sc = c.securityContext || {};
		const caps = (sc.capabilities || {}).add || [];
		if (sc.privileged) problems.push(`${c.name}: privileged`);
		if (sc.allowPrivilegeEscalation !== false) problems.push(`${c.name}: privilege escalation allowed`);
		if (JSON.stringify((sc.capabilities || {}).drop) !== '["ALL"]') problems.push(`${c.name}: does not drop ALL`);
		if (JSON.stringify([...caps].sort()) !== '["BPF","NET_ADMIN","NET_RAW","PERFMON"]')
			problems.push(`${c.name}: capabilities ${JSON.stringify(caps)}, want BPF, NET_ADMIN, NET_RAW, PERFMON`);
		const sp = sc.seccompProfile || {};
		if (sp.type !== "Localhost") problems.push(`${c.name}: seccompProfile ${JSON.stringify(sp)}, want Localhost`);
		else if (!fs.existsSync(`${__dirname}/seccomp/${sp.localhostProfile}`))
			problems.push(`${c.name}: seccompProfile ${sp.localhostProfile} is not tools/deploy/seccomp/'s`);
		if (!c.livenessProbe || c.livenessProbe.httpGet.path !== "/healthz") problems.push(`${c.name}: no /healthz liveness probe`);
		if (!c.readinessProbe || c.readinessProbe.httpGet.path !== "/readyz") problems.push(`${c.name}: no /readyz readiness probe`);
	}
	if (!spec.hostNetwork) problems.push("not hostNetwork");
	const ann = doc.spec.template.metadata.annotations || {};
	if (ann["prometheus.io/scrape"] !== "true") problems.push("no prometheus.io/scrape annotation");
	for (const c of spec.initContainers || []) {
		const sc = c.securityContext || {};
		if (sc.privileged || sc.allowPrivilegeEscalation !== false || ((sc.capabilities || {}).add || []).length)
			problems.push(`init container ${c.name}: more than it needs`);
	}
	const paths = spec.volumes.filter((v) => v.hostPath).map((v) => v.hostPath.path).sort();
	const want = ["/opt/cni/bin", "/run/xpile", "/sys/fs/bpf", "/tmp/afxdp_dp",
		"/var/lib/kubelet/device-plugins", "/var/lib/kubelet/pod-resources"];
	if (JSON.stringify(paths) !== JSON.stringify(want))
		problems.push(`hostPath volumes ${JSON.stringify(paths)}`);
	return problems;
}

// PodSecurity "restricted" (which includes "baseline"), as the admission plugin
// checks a Pod: each rule that fails, by the name the standard gives it.
const baselineCaps = ["AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
	"NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"];
const restrictedVolumes = ["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
	"persistentVolumeClaim", "projected", "secret"];
const safeSysctls = ["kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
	"net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
	"net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
	"net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"];
function restricted(spec) {
	const p = [];
	const psc = spec.securityContext || {};
	const all = [...(spec.initContainers || []), ...spec.containers, ...(spec.ephemeralContainers || [])];
	if (spec.hostNetwork || spec.hostPID || spec.hostIPC) p.push("host namespaces (hostNetwork, hostPID, hostIPC)");
	for (const v of spec.volumes || []) {
		if (v.hostPath) p.push(`hostPath volume ${v.name}`);
		const type = Object.keys(v).find((k) => k !== "name");
		if (!restrictedVolumes.includes(type)) p.push(`volume ${v.name}: type ${type} not allowed`);
	}
	for (const s of (psc.sysctls || [])) if (!safeSysctls.includes(s.name)) p.push(`sysctl ${s.name}`);
	const podSeccomp = (psc.seccompProfile || {}).type;
	if (podSeccomp === "Unconfined") p.push("seccompProfile Unconfined");
	for (const c of all) {
		const sc = c.securityContext || {};
		const caps = sc.capabilities || {};
		if (sc.privileged) p.push(`${c.name}: privileged`);
		if ((c.ports || []).some((x) => x.hostPort)) p.push(`${c.name}: hostPort`);
		if (sc.procMount && sc.procMount !== "Default") p.push(`${c.name}: procMount`);
		if (sc.windowsOptions && sc.windowsOptions.hostProcess) p.push(`${c.name}: hostProcess`);
		const se = sc.seLinuxOptions || psc.seLinuxOptions || {};
		if (se.user || se.role) p.push(`${c.name}: seLinuxOptions user/role`);
		for (const a of caps.add || []) if (!baselineCaps.includes(a)) p.push(`${c.name}: capability ${a} added (baseline)`);
		if (sc.allowPrivilegeEscalation !== false) p.push(`${c.name}: allowPrivilegeEscalation != false`);
		if (!(caps.drop || []).includes("ALL")) p.push(`${c.name}: capabilities do not drop ALL`);
		for (const a of caps.add || []) if (a !== "NET_BIND_SERVICE") p.push(`${c.name}: capability ${a} added (restricted)`);
		const nonRoot = sc.runAsNonRoot !== undefined ? sc.runAsNonRoot : psc.runAsNonRoot;
		if (nonRoot !== true) p.push(`${c.name}: runAsNonRoot != true`);
		const uid = sc.runAsUser !== undefined ? sc.runAsUser : psc.runAsUser;
		if (uid === 0) p.push(`${c.name}: runAsUser 0`);
		const seccomp = (sc.seccompProfile || {}).type || podSeccomp;
		if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost") p.push(`${c.name}: seccompProfile not RuntimeDefault or Localhost`);
	}
	return p;
}

// Our own promises about an engine Pod: what it asks for, and nothing of the node's.
function enginePod(spec) {
	const p = [];
	for (const c of spec.containers) {
		const lim = (c.resources || {}).limits || {};
		if (!Object.keys(lim).some((k) => k.startsWith("xpile.io/"))) p.push(`${c.name}: requests no xpile.io resource`);
		if (!(c.args || []).includes("--uds")) p.push(`${c.name}: not run with --uds`);
	}
	return p;
}

// A NetworkAttachmentDefinition (k8s.cni.cncf.io/v1): its config is what xpile-cni takes.
function attachment(doc) {
	const p = [];
	const ann = (doc.metadata || {}).annotations || {};
	if (!String(ann["k8s.v1.cni.cncf.io/resourceName"] || "").startsWith("xpile.io/"))
		p.push("no k8s.v1.cni.cncf.io/resourceName annotation naming an xpile.io resource");
	let conf;
	try {
		conf = JSON.parse((doc.spec || {}).config);
	} catch (e) {
		return [`spec.config is not JSON: ${e.message}`];
	}
	if (!["0.3.0", "0.3.1", "0.4.0", "1.0.0"].includes(conf.cniVersion)) p.push(`cniVersion ${conf.cniVersion}`);
	if (conf.type !== "xpile-cni") p.push(`type ${conf.type}, want xpile-cni`);
	if (!conf.name) p.push("no name");
	if (conf.mode && !["netdev", "queue"].includes(conf.mode)) p.push(`mode ${conf.mode}`);
	if (conf.ipam) p.push("ipam (xpile-cni refuses it)");
	return p;
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
	if (key === "k8s.cni.cncf.io/v1/NetworkAttachmentDefinition") {
		const p = attachment(doc);
		console.log(p.length ? `invalid ${doc.kind} ${name}: ${p.join("; ")}` : `ok ${doc.kind} ${name}`);
		bad += p.length ? 1 : 0;
		continue;
	}
	if (!kinds[key]) {
		console.log(`invalid ${key} ${name}: no schema for this kind here`);
		bad++;
		continue;
	}
	try {
		const Model = kinds[key]();
		new Model(doc).validate();
		const extra =
			key === "apps/v1/DaemonSet" ? leastPrivilege(doc) :
			key === "v1/ConfigMap" && name === "xpile-agent" ? socketsClosed(doc) :
			key === "v1/Pod" ? [...restricted(doc.spec).map((r) => `PodSecurity restricted: ${r}`), ...enginePod(doc.spec)] :
			[];
		if (extra.length) throw new Error(extra.join("; "));
		console.log(`ok ${doc.kind} ${name}`);
	} catch (e) {
		console.log(`invalid ${doc.kind} ${name}: ${String(e.message).split("\n").slice(0, 3).join(" | ")}`);
		bad++;
	}
}
process.exit(expectInvalid ? (bad ? 0 : 1) : bad ? 1 : 0);
