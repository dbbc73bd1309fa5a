// Stage 2 of planning: device pools (see the package comment in request.go).

package plan

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// device is one device as the planner sees it.
type device struct {
	ID     string // id in the answer: "cuda:0", or "node1/cuda:0" in a cluster
	Node   int    // index of the node in a cluster (0 otherwise)
	Dev    registry.Device
	Usable int64 // bytes the plan may place on it: its pool's budget (budget.go)
	// BandwidthGBs is the memory bandwidth (detected, else datasheet); 0 unknown.
	BandwidthGBs    float64
	BandwidthSource string
	Spec            *specs.Spec // datasheet record, nil when unknown
	Domain          int         // high-bandwidth domain index within the pool, -1 for none
	// LinkGBs is the per-direction bandwidth of the device's high-bandwidth
	// link (NVLink, xGMI, ICI ...), 0 when none is known; LinkKind is that
	// link's kind as the registry names it ("nvswitch"), "" for none.
	LinkGBs  float64
	LinkKind string
	// MeshLinkGBs is, on a fully connected mesh without a switch (XGMI:
	// one Infinity Fabric link between each pair of GPUs), the
	// per-direction bandwidth of one link, which is all one peer gets; 0
	// otherwise (tpLinkGBs reads it).
	MeshLinkGBs float64
	// PCIeGBs is the one-direction bandwidth of its PCIe link, 0 unknown.
	PCIeGBs float64
}

// pool is a set of devices a plan may combine: one kind and one vendor (a
// plan never mixes families or vendors in one tensor or pipeline group).
type pool struct {
	Kind    registry.Kind
	Vendor  string
	Budget  budget // the engine its plans are for and its memory rule
	Devices []*device
	// Domains are groups of pool devices joined by a high-bandwidth link
	// (nvlink, nvswitch, xgmi, ici, neuronlink, accelerator RoCE), each in
	// pool order.
	Domains [][]*device
	// InterNodeGBs is the per-direction bandwidth between cluster nodes
	// (minimum over nodes of their InfiniBand/RoCE NICs); 0 outside clusters.
	InterNodeGBs float64
	// groups is identicalGroups of each domain, domain by domain, when
	// grouped (setGroups, once the domains are final): every level of
	// every pass reads them, and the pools of a shared registry serve
	// every request on it.
	groups  [][]*device
	grouped bool
	// gpus is distinctGPUs' answer, set with the devices (setGPUs).
	gpus    []*device
	gpusSet bool
	// root is the pool this one restricts to some of its devices
	// (restrict); nil for a pool built from a registry or a cluster.
	root *pool
	// byEngine: devices of the same kind and vendor are in another pool,
	// claimed by another default engine (an A100 for vLLM, a P40 for
	// llama.cpp), so the kind alone does not say which devices a
	// refusal is of.
	byEngine bool
}

// origin is the pool built from the registry or cluster that p restricts,
// p itself when p is one: a restricted pool is that pool's kind, vendor
// and budget on its own devices, its domains cut to them.
func (p *pool) origin() *pool {
	if p.root != nil {
		return p.root
	}
	return p
}

// setGroups groups the pool's domains once for domainGroups. Only the
// code that builds a pool calls it: a built pool is only read.
func (p *pool) setGroups() {
	p.groups, p.grouped = groupDomains(p.Domains), true
}

// setGPUs lists the pool's distinct GPUs once for distinctGPUs; like
// setGroups, only the code that builds a pool calls it.
func (p *pool) setGPUs() {
	p.gpus, p.gpusSet = firstOfEachGPU(p.Kind, p.Devices), true
}

// distinctGPUs is the first device of each distinct GPU of the pool, in
// pool order: distinct by name, memory size and, in a CUDA pool, compute
// capability (what vLLM's start-up charge reads, vllmcharge.go). A pool
// of thousands of identical devices has one. Callers only read it.
func (p *pool) distinctGPUs() []*device {
	if p.gpusSet {
		return p.gpus
	}
	return firstOfEachGPU(p.Kind, p.Devices)
}

// gpuModel is what tells GPUs apart for distinctGPUs.
type gpuModel struct {
	name, capability string
	memory           int64
}

// firstOfEachGPU is the first device of each distinct GPU of ds, devices
// of a pool of kind k. A pool holds few distinct GPUs: each device is
// compared with those found so far.
func firstOfEachGPU(k registry.Kind, ds []*device) []*device {
	var out []*device
next:
	for _, d := range ds {
		m := gpuModelOf(k, d)
		for _, f := range out {
			if gpuModelOf(k, f) == m {
				continue next
			}
		}
		out = append(out, d)
	}
	return out
}

// gpuModelOf is what distinguishes d among the GPUs of a pool of kind k.
func gpuModelOf(k registry.Kind, d *device) gpuModel {
	m := gpuModel{name: d.Dev.Name, memory: d.Dev.MemoryBytes}
	if k == registry.KindCUDA {
		m.capability = d.Dev.ComputeCapability
	}
	return m
}

// domainGroups is the candidate tensor-parallel groups of the pool: the
// identical devices of each high-bandwidth domain (identicalGroups), domain
// by domain. Callers only read them.
func (p *pool) domainGroups() [][]*device {
	if p.grouped {
		return p.groups
	}
	return groupDomains(p.Domains)
}

// groupDomains is identicalGroups of each domain, in domain order.
func groupDomains(doms [][]*device) [][]*device {
	var out [][]*device
	for _, dom := range doms {
		out = append(out, identicalGroups(dom)...)
	}
	return out
}

func (p *pool) label() string {
	if p.Vendor != "" {
		return fmt.Sprintf("%s (%s)", p.Kind, p.Vendor)
	}
	return string(p.Kind)
}

// deviceNames names the pool's devices with the verb that follows them:
// "cuda:1 (Tesla P40) does", "cuda:1 (Tesla P40), cuda:2 (Tesla P40) do".
func (p *pool) deviceNames() string {
	if len(p.Devices) == 1 {
		return poolDevices(p) + " does"
	}
	return poolDevices(p) + " do"
}

func (p *pool) usableTotal() int64 {
	var t int64
	for _, d := range p.Devices {
		t += d.Usable
	}
	return t
}

// highBandwidthKinds are the device-to-device links tensor parallelism may
// span. InfiniBand/RoCE/Ethernet leave the machine and PCIe is shared with
// the host: neither counts (a NIC in a machine must not turn PCIe-connected
// GPUs into a tensor-parallel group).
var highBandwidthKinds = map[string]bool{
	registry.LinkNVLink: true, registry.LinkNVSwitch: true, registry.LinkXGMI: true,
	registry.LinkICI: true, registry.LinkNeuronLink: true,
}

// highBandwidth reports whether tensor parallelism may span an interconnect:
// one of highBandwidthKinds, or RoCE between accelerators (the on-chip
// scale-up ports of Gaudi 2/3 OAM modules, which detection reports with the
// devices they join). RoCE from a host NIC (internal/detect/host) lists no
// devices: it leaves the machine, so it never makes a domain.
func highBandwidth(ic *registry.Interconnect) bool {
	return highBandwidthKinds[ic.Kind] || ic.Kind == registry.LinkRoCE && len(ic.Devices) >= 2
}

// bidirectionalLinks are link kinds whose bandwidth figures are quoted as the
// sum of both directions (NVLink, NVSwitch, Infinity Fabric, ICI datasheets;
// contract example "nvswitch 900"); the all-reduce uses half. InfiniBand,
// RoCE and PCIe rates are per direction.
var bidirectionalLinks = map[string]bool{
	registry.LinkNVLink: true, registry.LinkNVSwitch: true, registry.LinkXGMI: true,
	registry.LinkICI: true, registry.LinkNeuronLink: true,
}

// specKey is what specs.ForDevice reads of a device: its PCI id, its name
// and its memory size.
type specKey struct {
	pciID, name string
	memory      int64
}

type specFound struct {
	spec specs.Spec
	ok   bool
}

// specMemo remembers specs.ForDevice within one request: a registry holds
// many identical devices, and matching a name normalizes it each time.
type specMemo map[specKey]specFound

func (sm specMemo) forDevice(d *registry.Device) (specs.Spec, bool) {
	if sm == nil {
		return specs.ForDevice(d)
	}
	k := specKey{d.PCIID, d.Name, d.MemoryBytes}
	f, ok := sm[k]
	if !ok {
		f.spec, f.ok = specs.ForDevice(d)
		sm[k] = f
	}
	return f.spec, f.ok
}

// newDevice builds the planner's view of one registry device under the
// budget of its pool (sm may be nil).
func newDevice(d registry.Device, id string, node int, b budget, sm specMemo) *device {
	dv := &device{ID: id, Node: node, Dev: d, Usable: b.usable(&d), Domain: -1}
	if s, ok := sm.forDevice(&d); ok {
		dv.Spec = &s
	}
	switch {
	case d.MemoryBandwidthGBs > 0:
		dv.BandwidthGBs, dv.BandwidthSource = d.MemoryBandwidthGBs, "detected"
	case dv.Spec != nil && dv.Spec.BandwidthGBs > 0:
		dv.BandwidthGBs, dv.BandwidthSource = dv.Spec.BandwidthGBs, "datasheet "+dv.Spec.Name
	case d.Kind == registry.KindCPU:
		if h, ok := specs.HostMemoryByCPUName(d.Name); ok {
			dv.BandwidthGBs, dv.BandwidthSource = h.BandwidthGBs(), fmt.Sprintf("datasheet %s, one socket: %d channels x %d MT/s x 8 B", h.Family, h.Channels, h.MTs)
		}
	}
	if d.PCIe != nil && d.PCIe.BandwidthGBs > 0 {
		dv.PCIeGBs = d.PCIe.BandwidthGBs
	}
	return dv
}

// buildPools groups the usable devices of one registry (one cluster node) by
// kind and vendor and finds their high-bandwidth domains. wanted, when not
// nil, restricts the devices to those ids (answer ids).
func buildPools(reg *registry.Registry, node int, prefix string, rule engineRule, wanted map[string]bool) []*pool {
	byKey := map[string]*pool{}
	var order []string
	local := map[string]*device{}
	sm := specMemo{}
	for _, d := range reg.Devices {
		id := prefix + d.ID
		if !d.Available || d.UsableMemory() <= 0 {
			continue
		}
		if wanted != nil && !wanted[id] {
			continue
		}
		eng, _ := rule.engineOf(&d)
		key := poolKey(&d, id)
		if engine.CannotRunDevice(eng, &d) != "" {
			// A GPU the engine runs nothing on (a P40 under a
			// named vLLM) is a pool of its own, whose every level
			// the engine refuses, not a member that refuses the
			// others' pool.
			key += "|below-floor"
		}
		key += "|" + eng.Name()
		p, ok := byKey[key]
		if !ok {
			p = &pool{Kind: d.Kind, Vendor: strings.ToLower(d.Vendor), Budget: rule.budgetFor(&d)}
			byKey[key] = p
			order = append(order, key)
		}
		dv := newDevice(d, id, node, p.Budget, sm)
		p.Devices = append(p.Devices, dv)
		local[d.ID] = dv
	}
	kinds := map[string]int{}
	for _, k := range order {
		kinds[k[:strings.LastIndex(k, "|")]]++
	}
	var out []*pool
	for _, k := range order {
		p := byKey[k]
		p.byEngine = kinds[k[:strings.LastIndex(k, "|")]] > 1
		p.Budget.setDefaults(rule, p.Devices)
		p.Domains = domains(reg, p, local)
		p.setGroups()
		p.setGPUs()
		out = append(out, p)
	}
	return out
}

// poolKey is the pool a device belongs to: its kind and vendor, except
//   - a MIG slice, which is a pool of its own: slices of a GPU cannot share
//     tensors (no CUDA IPC or peer-to-peer between GPU instances, NVIDIA MIG
//     user guide, "Application Considerations":
//     https://docs.nvidia.com/datacenter/tesla/mig-user-guide/), so a model
//     is never split over slices;
//   - an AMD compute partition (MI300 CPX/DPX/QPX), which pools only with
//     partitions of the same mode: partitions are HIP devices of their own
//     that RCCL runs collectives over ("NPS4 and CPX partition modes", RCCL
//     usage tips, https://rocm.docs.amd.com/projects/rccl/en/latest/how-to/rccl-usage-tips.html),
//     unlike MIG slices, but a 24 GB CPX slice never joins whole GPUs;
//   - a GPU whose memory is host RAM (iGPU, APU, unified memory), which never
//     joins a split with discrete GPUs of its vendor.
//
// buildPools also keeps apart devices that different engines plan when the
// request names none (engine.Default: an A100 is vLLM's, a P40, below vLLM's
// compute capability 7.0, llama.cpp's), so neither refuses the other's.
func poolKey(d *registry.Device, id string) string {
	key := string(d.Kind) + "|" + strings.ToLower(d.Vendor)
	switch {
	case d.MIG != nil && d.MIG.Instance != "":
		return key + "|mig|" + id
	case d.Partition != nil && d.Partition.Parent != "":
		return key + "|partition|" + d.Partition.Compute
	case d.MemoryShared && d.Kind != registry.KindCPU:
		return key + "|shared"
	}
	return key
}

// registryPools is buildPools of the request's registry. The pools of a
// registry decoded through regjson.DecodeShared (RegistryShared) are built once per engine
// rule and shared by every request that sends the same registry bytes: such a
// registry never changes, and planning only reads pools and devices (the
// stages and sub-pools it makes are its own; an internal/api test,
// TestPlanningLeavesTheSharedRegistryAlone, runs every golden question
// concurrently under -race on one registry).
func registryPools(req *planning, want map[string]bool) []*pool {
	if want != nil || req.Registry == nil || !req.RegistryShared {
		return buildPools(req.Registry, 0, "", req.engineRule(), want)
	}
	k := poolsKey{req.Registry, req.engineRule(), engine.Generation()}
	sharedPools.Lock()
	ps, ok := sharedPools.m[k]
	sharedPools.Unlock()
	if ok {
		return ps
	}
	ps = buildPools(req.Registry, 0, "", req.engineRule(), nil)
	sharedPools.Lock()
	if sharedPools.m == nil || len(sharedPools.m) >= maxSharedPools {
		sharedPools.m = make(map[poolsKey][]*pool)
	}
	sharedPools.m[k] = ps
	sharedPools.Unlock()
	return ps
}

// poolsKey names the pools of one registry under one engine rule while
// the registered engines stay the same (their budgets are in the pools).
type poolsKey struct {
	reg     *registry.Registry
	rule    engineRule
	engines uint64 // engine.Generation
}

// maxSharedPools bounds the remembered pools (regjson.DecodeShared holds
// 16 registries; each may be asked with four engine values); when full,
// all are forgotten.
const maxSharedPools = 64

var sharedPools struct {
	sync.Mutex
	m map[poolsKey][]*pool
}

// domains returns the connected components, over high-bandwidth links, of
// the pool's devices (components of one device are not domains). Each
// device's LinkGBs is the slowest per-direction link figure of its domain.
func domains(reg *registry.Registry, p *pool, local map[string]*device) [][]*device {
	in := map[*device]bool{}
	for _, d := range p.Devices {
		in[d] = true
	}
	parent := map[*device]*device{}
	var find func(*device) *device
	find = func(d *device) *device {
		for parent[d] != nil && parent[d] != d {
			d = parent[d]
		}
		return d
	}
	linkGBs := map[*device]float64{}
	meshGBs := map[*device]float64{} // 0: on no mesh; -1: on one of unreported rate
	for _, ic := range reg.SystemIO.Interconnects {
		if !highBandwidth(&ic) {
			continue
		}
		per := ic.BandwidthGBs
		if bidirectionalLinks[ic.Kind] {
			per /= 2
		}
		var members []*device
		for _, id := range ic.Devices {
			if d, ok := local[id]; ok && in[d] {
				members = append(members, d)
			}
		}
		for i, d := range members {
			if d.LinkKind == "" {
				d.LinkKind = ic.Kind
			}
			if ic.Kind == registry.LinkXGMI {
				meshGBs[d] = slowerMeshLink(meshGBs[d], ic.LinkBandwidthGBs)
			}
			if per > 0 && (linkGBs[d] == 0 || per < linkGBs[d]) {
				linkGBs[d] = per
			}
			if i > 0 {
				a, b := find(members[0]), find(d)
				if a != b {
					parent[b] = a
				}
			}
		}
	}
	groups := map[*device][]*device{}
	var roots []*device
	for _, d := range p.Devices {
		r := find(d)
		if _, ok := groups[r]; !ok {
			roots = append(roots, r)
		}
		groups[r] = append(groups[r], d)
	}
	var out [][]*device
	for _, r := range roots {
		g := groups[r]
		if len(g) < 2 {
			g[0].LinkKind = "" // a link to no other device of the pool
			continue
		}
		for _, d := range g {
			d.Domain = len(out)
			d.LinkGBs = linkGBs[d]
			if d.LinkGBs == 0 && d.Spec != nil && d.Spec.InterconnectGBs > 0 {
				// The link is there but its rate was not reported: the
				// datasheet's per-device figure (a bidirectional aggregate).
				d.LinkGBs = d.Spec.InterconnectGBs / 2
			}
			d.MeshLinkGBs = meshLinkGBs(d, meshGBs[d])
		}
		out = append(out, g)
	}
	return out
}

// slowerMeshLink folds one XGMI interconnect's per-link rate (its
// LinkBandwidthGBs, per direction; 0 when not reported) into what a device
// has so far (0: no XGMI yet; -1: XGMI of unreported rate): the slowest
// reported rate, -1 while none is.
func slowerMeshLink(have, rate float64) float64 {
	switch {
	case rate <= 0 && have == 0:
		return -1
	case rate <= 0:
		return have
	case have <= 0 || rate < have:
		return rate
	}
	return have
}

// meshLinkGBs is a domain device's MeshLinkGBs: the per-link rate its XGMI
// interconnects report (seen is slowerMeshLink's fold), else its part's
// (specs.XGMIPerLinkGBs, halved: the datasheet figure is both directions);
// 0 for a device on no XGMI link or of unknown rate. XGMI hives are taken
// as one link between each pair: the MI300X and MI325X 8-GPU platforms are
// wired so (specs' xgmiMeshLinks), and four GPUs of one are still a mesh of
// single links. MI300A nodes join each pair of APUs by two links (AMD CDNA 3
// white paper, Figure 10), which this counts as one: an under-estimate there.
func meshLinkGBs(d *device, seen float64) float64 {
	if seen > 0 {
		return seen
	}
	if seen < 0 && d.Spec != nil {
		return specs.XGMIPerLinkGBs(*d.Spec) / 2
	}
	return 0
}

// tpLinkGBs is the per-direction bandwidth device d's all-reduces have in a
// tensor-parallel group of tp devices. Through a switch (NVSwitch) or over
// a link of its own rate the group's ring runs at d's link figure
// (LinkGBs). On a fully connected mesh (MeshLinkGBs) d reaches each of its
// tp-1 peers over its own link and the collective drives them all at once
// (RCCL runs its rings over every link; AMD quotes the 8-GPU platform's
// "P2P ring peak aggregate I/O bandwidth" as 896 GB/s, the sum over the seven
// links: specs' cdna3InfinityFabric): tp-1 links, and no more than LinkGBs
// where that is known. A ring of 8 MI300X gets 7 x 64 = 448 GB/s each way,
// of 2 gets the one link between them, 64.
func (d *device) tpLinkGBs(tp int) float64 {
	if d.MeshLinkGBs <= 0 || tp < 2 {
		return d.LinkGBs
	}
	mesh := d.MeshLinkGBs * float64(tp-1)
	if d.LinkGBs > 0 && d.LinkGBs < mesh {
		return d.LinkGBs
	}
	return mesh
}

// supported returns whether a device can run a native precision ("fp16",
// "int4", ...). The registry's quantizations list wins; without one the
// answer is internal/precision's table for the device's architecture (or its
// family's default when the architecture is not named).
func supported(d *registry.Device, native string) bool {
	if len(d.Quantizations) > 0 {
		return d.HasQuant(native)
	}
	return slices.Contains(precision.Of(d), native)
}

// poolRefuses says why the pool's engine cannot run the weights of model m
// at level l on every device of the pool, "" when it can (deviceRefuses).
// An empty pool runs nothing.
func poolRefuses(p *pool, m *model.Model, l quant.Level) string {
	if len(p.Devices) == 0 {
		return fmt.Sprintf("%s devices do not support %s", p.label(), levelNeeds(l))
	}
	for _, d := range p.Devices {
		why, byList := deviceRefuses(p.Budget.Engine, &d.Dev, m, l)
		if byList && p.byEngine {
			return fmt.Sprintf("%s not support %s", p.deviceNames(), levelNeeds(l))
		}
		if byList {
			return fmt.Sprintf("%s devices do not support %s", p.label(), levelNeeds(l))
		}
		if why != "" {
			return why
		}
	}
	return ""
}

// levelNeeds names level l in a refusal by the precision list: the level
// itself, and the device precision its kernels are, where the two differ
// (gpt-oss's mxfp4 and GGUF's 4-bit types run on int4 kernels, quant.MXFP4),
// so the refusal names the level the plan asked for and not only int4.
func levelNeeds(l quant.Level) string {
	native := l.Native()
	if native == "" || native == string(l) {
		return string(l)
	}
	return fmt.Sprintf("%s, which needs %s kernels", l, native)
}

// deviceRefuses says why engine e cannot run the weights of model m at
// level l on device d, "" when it can: the engine's own rule
// (engine.LevelRule) where it has one, else the device's precision list
// (supported), whose refusal is byList, worded by the caller.
func deviceRefuses(e engine.Engine, d *registry.Device, m *model.Model, l quant.Level) (why string, byList bool) {
	if rule, ok := e.(engine.LevelRule); ok {
		if why, decided := rule.CannotRunLevel(d, m, l); decided {
			return why, false
		}
	}
	return "", !supported(d, l.Native())
}

// orderPools puts accelerators before the CPU, then the pool with the most
// usable memory first (ties: registry order).
func orderPools(ps []*pool) {
	sort.SliceStable(ps, func(i, j int) bool {
		ci, cj := ps[i].Kind == registry.KindCPU, ps[j].Kind == registry.KindCPU
		if ci != cj {
			return !ci
		}
		return ps[i].usableTotal() > ps[j].usableTotal()
	})
}
