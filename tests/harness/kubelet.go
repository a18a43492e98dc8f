// SPDX-License-Identifier: BSD-3-Clause

// A stand-in kubelet on Go's grpc (Debian golang-google-grpc-dev), for the agent's
// device-plugin tests: the same commands and events as tests/harness/kubelet.py (its
// docstring has the list), so one suite drives both gRPC stacks. The messages come
// from tools/agent/proto through protoc-gen-go at test time (package xpiletest/dp);
// the services are written out here, as the kubelet's generated code would have them.
//
// Build (offline): GOPATH=GEN:/usr/share/gocode GO111MODULE=off go build kubelet.go
// Usage: kubelet DIR
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "xpiletest/dp"
)

// The grpc of Debian 12 (1.33) marshals with github.com/golang/protobuf 1.3, which
// predates the generated code of google.golang.org/protobuf: marshal with the latter.
type codec struct{}

func (codec) Marshal(v interface{}) ([]byte, error)      { return proto.Marshal(v.(proto.Message)) }
func (codec) Unmarshal(b []byte, v interface{}) error    { return proto.Unmarshal(b, v.(proto.Message)) }
func (codec) Name() string                               { return "proto" }

var (
	dir     string
	outMu   sync.Mutex
	mu      sync.Mutex
	plugins = map[string]*grpc.ClientConn{}
	created time.Time
)

func emit(kv map[string]interface{}) {
	b, _ := json.Marshal(kv) // map keys come out sorted
	outMu.Lock()
	fmt.Println(string(b))
	outMu.Unlock()
}

type registration struct{}

func register(srv interface{}, ctx context.Context, dec func(interface{}) error,
	_ grpc.UnaryServerInterceptor) (interface{}, error) {
	req := new(pb.RegisterRequest)
	if err := dec(req); err != nil {
		return nil, err
	}
	ms := float64(time.Since(created).Microseconds()) / 1e3
	go dial(req, ms) // as the kubelet: answer first, then dial the plugin
	return new(pb.Empty), nil
}

var registrationDesc = grpc.ServiceDesc{
	ServiceName: "v1beta1.Registration",
	HandlerType: (*interface{})(nil),
	Methods:     []grpc.MethodDesc{{MethodName: "Register", Handler: register}},
	Metadata:    "deviceplugin.proto",
}

func dialer(ctx context.Context, addr string) (net.Conn, error) {
	return (&net.Dialer{}).DialContext(ctx, "unix", addr)
}

func dial(req *pb.RegisterRequest, ms float64) {
	conn, err := grpc.Dial(filepath.Join(dir, req.Endpoint), grpc.WithInsecure(),
		grpc.WithContextDialer(dialer), grpc.WithBlock(), grpc.WithTimeout(5*time.Second))
	if err != nil {
		emit(map[string]interface{}{"ev": "error", "cmd": "dial", "error": err.Error()})
		return
	}
	mu.Lock()
	if old := plugins[req.ResourceName]; old != nil {
		old.Close()
	}
	plugins[req.ResourceName] = conn
	mu.Unlock()
	opts := new(pb.DevicePluginOptions)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := conn.Invoke(ctx, "/v1beta1.DevicePlugin/GetDevicePluginOptions", new(pb.Empty), opts); err != nil {
		emit(map[string]interface{}{"ev": "error", "cmd": "options", "error": err.Error()})
		return
	}
	emit(map[string]interface{}{"ev": "register", "resource": req.ResourceName,
		"endpoint": req.Endpoint, "version": req.Version,
		"preferred": opts.GetPreferredAllocationAvailable, "ms": ms})
	go watch(req.ResourceName, conn)
}

func watch(resource string, conn *grpc.ClientConn) {
	desc := &grpc.StreamDesc{StreamName: "ListAndWatch", ServerStreams: true}
	code := "OK"
	st, err := conn.NewStream(context.Background(), desc, "/v1beta1.DevicePlugin/ListAndWatch")
	if err == nil {
		err = st.SendMsg(new(pb.Empty))
	}
	if err == nil {
		err = st.CloseSend()
	}
	for err == nil {
		r := new(pb.ListAndWatchResponse)
		if err = st.RecvMsg(r); err != nil {
			break
		}
		devs, numa := map[string]string{}, map[string]int64{}
		for _, d := range r.Devices {
			devs[d.ID] = d.Health
			if d.Topology != nil && len(d.Topology.Nodes) > 0 {
				numa[d.ID] = d.Topology.Nodes[0].ID
			}
		}
		emit(map[string]interface{}{"ev": "devices", "resource": resource, "devices": devs, "numa": numa})
	}
	if s, ok := status.FromError(err); ok && err != nil {
		code = strings.ToUpper(codeName(s.Code().String()))
	}
	emit(map[string]interface{}{"ev": "watch_end", "resource": resource, "code": code})
}

// grpc-go names codes in CamelCase ("Unimplemented"); python and the spec in CAPS.
func codeName(s string) string {
	if s == "Canceled" {
		return "CANCELLED"
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func ids(s string) []string {
	if s == "-" {
		return nil
	}
	return strings.Split(s, ",")
}

func conn(resource string) *grpc.ClientConn {
	mu.Lock()
	defer mu.Unlock()
	return plugins[resource]
}

func invoke(resource, method string, req, rep proto.Message) (float64, error) {
	c := conn(resource)
	if c == nil {
		return 0, fmt.Errorf("no plugin registered for %s", resource)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	t0 := time.Now()
	err := c.Invoke(ctx, "/v1beta1.DevicePlugin/"+method, req, rep)
	return float64(time.Since(t0).Nanoseconds()) / 1e6, err
}

func allocReq(list string) *pb.AllocateRequest {
	return &pb.AllocateRequest{ContainerRequests: []*pb.ContainerAllocateRequest{{DevicesIds: ids(list)}}}
}

func round(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

func errEvent(ev string, err error) map[string]interface{} {
	m := map[string]interface{}{"ev": ev}
	if s, ok := status.FromError(err); ok {
		m["code"] = strings.ToUpper(codeName(s.Code().String()))
		m["details"] = s.Message()
	} else {
		m["code"] = "UNKNOWN"
		m["details"] = err.Error()
	}
	return m
}

func serve() *grpc.Server {
	sock := filepath.Join(dir, "kubelet.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubelet:", err)
		os.Exit(1)
	}
	created = time.Now()
	s := grpc.NewServer()
	s.RegisterService(&registrationDesc, registration{})
	go s.Serve(l)
	return s
}

func command(s *grpc.Server, w []string) *grpc.Server {
	switch w[0] {
	case "allocate":
		r := new(pb.AllocateResponse)
		ms, err := invoke(w[1], "Allocate", allocReq(w[2]), r)
		if err != nil {
			m := errEvent("allocate", err)
			m["resource"] = w[1]
			emit(m)
			break
		}
		c := r.ContainerResponses[0]
		mounts := []map[string]interface{}{}
		for _, m := range c.Mounts {
			mounts = append(mounts, map[string]interface{}{"container_path": m.ContainerPath,
				"host_path": m.HostPath, "read_only": m.ReadOnly})
		}
		emit(map[string]interface{}{"ev": "allocate", "resource": w[1], "envs": c.Envs,
			"mounts": mounts, "ms": round(ms)})
	case "preferred":
		n, _ := strconv.Atoi(w[4])
		req := &pb.PreferredAllocationRequest{ContainerRequests: []*pb.ContainerPreferredAllocationRequest{{
			AvailableDeviceIDs: ids(w[2]), MustIncludeDeviceIDs: ids(w[3]), AllocationSize: int32(n)}}}
		r := new(pb.PreferredAllocationResponse)
		if _, err := invoke(w[1], "GetPreferredAllocation", req, r); err != nil {
			emit(errEvent("preferred", err))
			break
		}
		got := r.ContainerResponses[0].DeviceIDs
		if got == nil {
			got = []string{}
		}
		emit(map[string]interface{}{"ev": "preferred", "ids": got})
	case "bench":
		n, _ := strconv.Atoi(w[3])
		lat := []float64{}
		for i := 0; i < n; i++ {
			ms, err := invoke(w[1], "Allocate", allocReq(w[2]), new(pb.AllocateResponse))
			if err != nil {
				emit(errEvent("bench", err))
				return s
			}
			lat = append(lat, ms)
		}
		sort.Float64s(lat)
		emit(map[string]interface{}{"ev": "bench", "n": n, "median_ms": round(lat[n/2]),
			"p90_ms": round(lat[n*9/10]), "max_ms": round(lat[n-1])})
	case "call":
		if _, err := invoke(w[1], w[2], new(pb.Empty), new(pb.Empty)); err != nil {
			emit(errEvent("call", err))
		} else {
			emit(map[string]interface{}{"ev": "call", "code": "OK"})
		}
	case "restart":
		s.Stop()
		mu.Lock()
		for k, c := range plugins {
			c.Close()
			delete(plugins, k)
		}
		mu.Unlock()
		ents, _ := os.ReadDir(dir) // what the kubelet does at start
		for _, e := range ents {
			if e.Name() != "kubelet_internal_checkpoint" {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
		s = serve()
		emit(map[string]interface{}{"ev": "restarted"})
	default:
		emit(map[string]interface{}{"ev": "error", "cmd": w[0], "error": "unknown command"})
	}
	return s
}

func main() {
	encoding.RegisterCodec(codec{})
	dir = os.Args[1]
	s := serve()
	emit(map[string]interface{}{"ev": "ready"})
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		w := strings.Fields(in.Text())
		if len(w) == 0 {
			continue
		}
		if w[0] == "quit" {
			break
		}
		s = command(s, w)
	}
	s.Stop()
}
