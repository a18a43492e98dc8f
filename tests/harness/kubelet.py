#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A stand-in kubelet on Debian's python3-grpcio, for the agent's device-plugin tests.

It does what the kubelet's device manager does with a plugin, on the real gRPC stack:
serves Registration on DIR/kubelet.sock; on each Register, dials the plugin's endpoint
(DIR/ENDPOINT), calls GetDevicePluginOptions and holds ListAndWatch open. Commands on
stdin, one a line; events on stdout, one JSON object a line:

  allocate RESOURCE ID[,ID...]        -> {"ev": "allocate", "resource", "envs", "mounts", "ms"}
  preferred RESOURCE AVAIL MUST SIZE  -> {"ev": "preferred", "ids": [...]}  (AVAIL, MUST: ID,ID or -)
  bench RESOURCE ID N                 -> {"ev": "bench", "n", "median_ms", "p90_ms", "max_ms"}
  restart                             -> the kubelet restarting: stop serving, empty DIR as
                                         the kubelet does, serve kubelet.sock anew
                                         {"ev": "restarted"}
  call RESOURCE METHOD                -> {"ev": "call", "code": "UNIMPLEMENTED"...} (any method)
  pod NAME NAMESPACE RESOURCE ID[,ID] -> PodResources List lists that pod with those
                                         devices from now on {"ev": "pod"}
  quit

Events it sends on its own: {"ev": "ready"}, {"ev": "register", "resource", "endpoint",
"version", "preferred", "ms"} (ms: from kubelet.sock's creation to the Register call),
{"ev": "devices", "resource", "devices": {ID: HEALTH}, "numa": {ID: NODE}},
{"ev": "watch_end", "resource", "code"}.

Usage: kubelet.py PYDIR DIR [PODRES]   (PYDIR: protoc --python_out of tools/agent/proto;
PODRES: where to serve the PodResources API, v1 List)
"""
import json
import os
import sys
import threading
import time
from concurrent import futures

sys.path.insert(0, sys.argv[1])
import grpc  # noqa: E402
import deviceplugin_pb2 as pb  # noqa: E402
import podresources_pb2 as prpb  # noqa: E402

DIR = sys.argv[2]
SOCK = os.path.join(DIR, "kubelet.sock")
out_lock = threading.Lock()
plugins = {}  # resource -> {"channel", "endpoint"}
created = [0.0]


def emit(**kv):
    with out_lock:
        sys.stdout.write(json.dumps(kv, sort_keys=True) + "\n")
        sys.stdout.flush()


def rpc(ch, method, req_cls, rep_cls):
    return ch.unary_unary("/v1beta1.DevicePlugin/" + method,
                          request_serializer=req_cls.SerializeToString,
                          response_deserializer=rep_cls.FromString)


def watch(resource, ch):
    lw = ch.unary_stream("/v1beta1.DevicePlugin/ListAndWatch",
                         request_serializer=pb.Empty.SerializeToString,
                         response_deserializer=pb.ListAndWatchResponse.FromString)
    code = "OK"
    try:
        for r in lw(pb.Empty()):
            numa = {d.ID: d.topology.nodes[0].ID for d in r.devices
                    if d.HasField("topology") and d.topology.nodes}
            emit(ev="devices", resource=resource,
                 devices={d.ID: d.health for d in r.devices}, numa=numa)
    except grpc.RpcError as e:
        code = e.code().name
    emit(ev="watch_end", resource=resource, code=code)


def dial(req, ms):
    ch = grpc.insecure_channel("unix:" + os.path.join(DIR, req.endpoint))
    old = plugins.get(req.resource_name)
    plugins[req.resource_name] = {"channel": ch, "endpoint": req.endpoint}
    if old:
        old["channel"].close()
    opts = rpc(ch, "GetDevicePluginOptions", pb.Empty, pb.DevicePluginOptions)(pb.Empty(), timeout=5)
    emit(ev="register", resource=req.resource_name, endpoint=req.endpoint, version=req.version,
         preferred=opts.get_preferred_allocation_available, ms=ms)
    threading.Thread(target=watch, args=(req.resource_name, ch), daemon=True).start()


def register(req, ctx):
    ms = round((time.monotonic() - created[0]) * 1e3, 3)
    # As the kubelet: answer first, then dial the plugin (it may still be starting).
    threading.Thread(target=dial, args=(req, ms), daemon=True).start()
    return pb.Empty()


def serve():
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    h = grpc.method_handlers_generic_handler("v1beta1.Registration", {
        "Register": grpc.unary_unary_rpc_method_handler(
            register, request_deserializer=pb.RegisterRequest.FromString,
            response_serializer=pb.Empty.SerializeToString)})
    server.add_generic_rpc_handlers((h,))
    server.add_insecure_port("unix:" + SOCK)
    created[0] = time.monotonic()
    server.start()
    return server


def ids(s):
    return [] if s == "-" else s.split(",")


def allocate(resource, idlist):
    ch = plugins[resource]["channel"]
    req = pb.AllocateRequest(container_requests=[pb.ContainerAllocateRequest(devices_ids=idlist)])
    t0 = time.monotonic()
    r = rpc(ch, "Allocate", pb.AllocateRequest, pb.AllocateResponse)(req, timeout=5)
    return r, (time.monotonic() - t0) * 1e3


def command(server, words):
    cmd = words[0]
    if cmd == "allocate":
        try:
            r, ms = allocate(words[1], ids(words[2]))
            c = r.container_responses[0]
            emit(ev="allocate", resource=words[1], envs=dict(c.envs), ms=round(ms, 3),
                 mounts=[{"container_path": m.container_path, "host_path": m.host_path,
                          "read_only": m.read_only} for m in c.mounts])
        except grpc.RpcError as e:
            emit(ev="allocate", resource=words[1], code=e.code().name, details=e.details())
    elif cmd == "preferred":
        ch = plugins[words[1]]["channel"]
        req = pb.PreferredAllocationRequest(container_requests=[
            pb.ContainerPreferredAllocationRequest(available_deviceIDs=ids(words[2]),
                                                   must_include_deviceIDs=ids(words[3]),
                                                   allocation_size=int(words[4]))])
        r = rpc(ch, "GetPreferredAllocation", pb.PreferredAllocationRequest,
                pb.PreferredAllocationResponse)(req, timeout=5)
        emit(ev="preferred", ids=list(r.container_responses[0].deviceIDs))
    elif cmd == "bench":
        lat = sorted(allocate(words[1], ids(words[2]))[1] for _ in range(int(words[3])))
        emit(ev="bench", n=len(lat), median_ms=round(lat[len(lat) // 2], 3),
             p90_ms=round(lat[len(lat) * 9 // 10], 3), max_ms=round(lat[-1], 3))
    elif cmd == "call":
        ch = plugins[words[1]]["channel"]
        try:
            rpc(ch, words[2], pb.Empty, pb.Empty)(pb.Empty(), timeout=5)
            emit(ev="call", code="OK")
        except grpc.RpcError as e:
            emit(ev="call", code=e.code().name, details=e.details())
    elif cmd == "restart":
        server.stop(0).wait()
        for p in plugins.values():
            p["channel"].close()
        plugins.clear()
        for f in os.listdir(DIR):  # what the kubelet does at start
            if f != "kubelet_internal_checkpoint":
                os.unlink(os.path.join(DIR, f))
        server = serve()
        emit(ev="restarted")
    return server


pods = []  # (name, namespace, resource, [ids])


def pod_list(req, ctx):
    r = prpb.ListPodResourcesResponse()
    for name, ns, res, ids in pods:
        pr = r.pod_resources.add(name=name, namespace=ns)
        pr.containers.add(name="engine").devices.add(resource_name=res, device_ids=ids)
    return r


def serve_podres(path):
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    h = grpc.method_handlers_generic_handler("v1.PodResourcesLister", {
        "List": grpc.unary_unary_rpc_method_handler(
            pod_list, request_deserializer=prpb.ListPodResourcesRequest.FromString,
            response_serializer=prpb.ListPodResourcesResponse.SerializeToString)})
    server.add_generic_rpc_handlers((h,))
    server.add_insecure_port("unix:" + path)
    server.start()
    return server


def main():
    podres = serve_podres(sys.argv[3]) if len(sys.argv) > 3 else None
    server = serve()
    emit(ev="ready")
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            break
        if words[0] == "pod":
            pods.append((words[1], words[2], words[3], ids(words[4])))
            emit(ev="pod")
            continue
        try:
            server = command(server, words)
        except Exception as e:  # one line, and the harness goes on
            emit(ev="error", cmd=words[0], error=repr(e))
    server.stop(0)
    if podres:
        podres.stop(0)


main()
