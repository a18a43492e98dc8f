// SPDX-License-Identifier: BSD-3-Clause

// A container runtime's CNI side, for xpile-cni's tests: Debian's libcni
// (golang-github-appc-cni-dev), called exactly as a runtime calls it: the pod's
// networks in order (its primary one, then each attachment, as Multus delegates
// them), CNI_ARGS with IgnoreUnknown=1 and the K8S_* keys the kubelet passes, results
// cached so that CHECK and DEL get ADD's as prevResult.
//
//	cniruntime add|check|del|version NETNS CONTAINERID CONFLIST:IFNAME...
//
// CNI_PATH (plugin directories) and CNI_CACHE (the result cache) from the
// environment. add prints each network's result as one JSON line; every command
// prints "ok" at the end, or "error: ..." and exits 1.
//
// Build (offline): GOPATH=/usr/share/gocode GO111MODULE=off go build cniruntime.go
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/containernetworking/cni/libcni"
)

func die(f string, a ...interface{}) {
	fmt.Printf("error: "+f+"\n", a...)
	os.Exit(1)
}

func main() {
	if len(os.Args) < 5 {
		die("usage: cniruntime add|check|del|version NETNS CONTAINERID CONFLIST:IFNAME...")
	}
	cmd, netns, id := os.Args[1], os.Args[2], os.Args[3]
	cni := libcni.NewCNIConfigWithCacheDir(filepath.SplitList(os.Getenv("CNI_PATH")),
		os.Getenv("CNI_CACHE"), nil)
	type net struct {
		list *libcni.NetworkConfigList
		rt   *libcni.RuntimeConf
	}
	nets := []net{}
	for _, a := range os.Args[4:] {
		i := strings.LastIndex(a, ":")
		if i < 0 {
			die("%s: CONFLIST:IFNAME", a)
		}
		list, err := libcni.ConfListFromFile(a[:i])
		if err != nil {
			die("%s: %v", a[:i], err)
		}
		nets = append(nets, net{list, &libcni.RuntimeConf{
			ContainerID: id, NetNS: netns, IfName: a[i+1:],
			Args: [][2]string{{"IgnoreUnknown", "1"}, {"K8S_POD_NAMESPACE", "default"},
				{"K8S_POD_NAME", "xsk-pod"}, {"K8S_POD_INFRA_CONTAINER_ID", id},
				{"K8S_POD_UID", "0d6a4f1e-xpile-test"}}}})
	}
	ctx := context.Background()
	switch cmd {
	case "add":
		for _, n := range nets {
			res, err := cni.AddNetworkList(ctx, n.list, n.rt)
			if err != nil {
				die("ADD %s: %v", n.list.Name, err)
			}
			b, _ := json.Marshal(res)
			fmt.Println(string(b))
		}
	case "check":
		for _, n := range nets {
			if err := cni.CheckNetworkList(ctx, n.list, n.rt); err != nil {
				die("CHECK %s: %v", n.list.Name, err)
			}
		}
	case "del": // in reverse, as a runtime tears down
		for i := len(nets) - 1; i >= 0; i-- {
			if err := cni.DelNetworkList(ctx, nets[i].list, nets[i].rt); err != nil {
				die("DEL %s: %v", nets[i].list.Name, err)
			}
		}
	case "version":
		for _, n := range nets {
			for _, p := range n.list.Plugins {
				v, err := cni.GetVersionInfo(ctx, p.Network.Type)
				if err != nil {
					die("VERSION %s: %v", p.Network.Type, err)
				}
				fmt.Printf("%s %s\n", p.Network.Type, strings.Join(v.SupportedVersions(), ","))
			}
		}
	default:
		die("unknown command %s", cmd)
	}
	fmt.Println("ok")
}
