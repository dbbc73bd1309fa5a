package snapshot

import (
	"bytes"
	"fmt"
	"net/netip"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Privacy. Identifiers are replaced when the archive is written, in two
// passes over everything recorded: the first collects every identifier, the
// second replaces each with a fake numbered by its rank in the sorted list.
// The same identifier therefore gets the same fake everywhere in one snapshot
// (a GPU UUID in nvidia-smi -L, in --query-gpu and in CUDA_VISIBLE_DEVICES
// still match), the order of identifiers is kept, and the result does not
// depend on the order in which concurrent backends read (the bytes stay
// deterministic). Nothing of the original is hashed into the fake, so a
// guessed serial number cannot be confirmed against a snapshot.
//
// Serial numbers and UUIDs are replaced unless KeepIDs is set; MAC and IP
// addresses always.

// idFiles are sysfs attributes whose whole content identifies one piece of
// hardware: amdgpu serial_number and unique_id (Linux
// drivers/gpu/drm/amd/amdgpu/amdgpu_device.c), the DMI product_serial,
// board_serial, chassis_serial, product_uuid and asset tags
// (drivers/firmware/dmi-id.c), Xen's /sys/hypervisor/uuid, InfiniBand
// node_guid, sys_image_guid and node_desc (which holds the host name;
// drivers/infiniband/core/sysfs.c).
var idFiles = map[string]bool{
	"serial_number": true, "serial": true, "unique_id": true,
	"product_serial": true, "board_serial": true, "chassis_serial": true, "product_uuid": true,
	"board_asset_tag": true, "chassis_asset_tag": true, "uuid": true,
	"node_guid": true, "sys_image_guid": true, "node_desc": true,
}

// netAddressFiles are the hardware-address attributes of a network interface
// (Documentation/ABI/testing/sysfs-class-net: address, broadcast,
// phys_port_id, phys_switch_id), scrubbed always.
var netAddressFiles = map[string]bool{
	"address": true, "broadcast": true, "perm_addr": true, "phys_port_id": true, "phys_switch_id": true,
}

var (
	// uuidText is an RFC 4122 UUID in its text form: nvidia-smi prints GPU
	// and MIG UUIDs as GPU-<uuid> and MIG-<uuid> (-L, --query-gpu=uuid,
	// /proc/driver/nvidia/gpus/*/information), vulkaninfo deviceUUID bare.
	uuidText = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	// guidText is a 64-bit GUID after a GUID label: ibstat prints
	// "Node GUID: 0x...", "System image GUID: 0x...", "Port GUID: 0x...".
	guidText = regexp.MustCompile(`(?i)\bguid\s*[:=]\s*0x([0-9a-f]{16})\b`)
	// labelledSerial is a value after a serial-number or unique-id label:
	// nvidia-smi -q "Serial Number : ...", rocm-smi "Serial Number: ..." and
	// "Unique ID: ...", hl-smi -q "Serial Number : ...".
	labelledSerial = regexp.MustCompile(`(?i)\b(?:serial(?:[ _-]?(?:number|no\.?))?|unique[ _-]?id)[ \t]*[:=][ \t]*(?:0x)?([A-Za-z0-9][A-Za-z0-9._/-]*)`)
	// macText is a colon-separated hardware address: 6 octets (Ethernet) up
	// to 20 (InfiniBand, Documentation/ABI/testing/sysfs-class-net).
	macText = regexp.MustCompile(`(?i)\b[0-9a-f]{2}(?::[0-9a-f]{2}){5,19}\b`)
	// ipv6Run is a run of characters an IPv6 address is made of; runs with
	// two colons or more are tried as addresses.
	ipv6Run = regexp.MustCompile(`[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*`)
	// ipv4Text is a dotted quad.
	ipv4Text = regexp.MustCompile(`\b(?:[0-9]{1,3}\.){3}[0-9]{1,3}\b`)
)

// scrubber holds the identifiers of one snapshot.
type scrubber struct {
	keepIDs    bool
	collecting bool
	seen       map[string]bool
	// literalSeen are identifiers as they were written, before idKey.
	literalSeen map[string]bool
	rank        map[string]int
	// literals are identifiers long enough to be replaced wherever they
	// appear (a serial read from sysfs and printed by a tool).
	literals []string
}

func newScrubber(keepIDs bool) *scrubber {
	return &scrubber{keepIDs: keepIDs, collecting: true, seen: map[string]bool{}, literalSeen: map[string]bool{}}
}

// seal ends collection: identifiers are ranked in sorted order.
func (s *scrubber) seal() {
	ids := make([]string, 0, len(s.seen))
	for v := range s.seen {
		ids = append(ids, v)
	}
	slices.Sort(ids)
	s.rank = make(map[string]int, len(ids))
	for i, v := range ids {
		s.rank[v] = i + 1
	}
	for v := range s.literalSeen {
		if !s.keepIDs && isLiteralID(v) {
			s.literals = append(s.literals, v)
		}
	}
	slices.Sort(s.literals)
	// longest first, so a serial that contains another is replaced whole
	slices.SortStableFunc(s.literals, func(a, b string) int { return len(b) - len(a) })
	s.collecting = false
}

// isLiteralID reports whether an identifier is distinctive enough to be
// replaced wherever it appears: six characters or more with a digit, and
// not all one character ("000000" is a placeholder, not a serial).
func isLiteralID(v string) bool {
	return len(v) >= 6 && strings.ContainsAny(v, "0123456789") && strings.Trim(v, v[:1]) != "" &&
		!strings.ContainsAny(v, ":") // addresses are matched by pattern
}

// file scrubs the content of the tree file p.
func (s *scrubber) file(p string, b []byte) []byte {
	base := path.Base(p)
	if netAddressFiles[base] && strings.Contains(p, "/net/") {
		return s.wholeValue(b, func(v string) string { return s.id(v, shapeLike) })
	}
	if !s.keepIDs && idFiles[base] {
		return s.wholeValue(b, s.serial)
	}
	return s.text(b)
}

// wholeValue replaces the content of an identifier file, keeping its
// surrounding white space.
func (s *scrubber) wholeValue(b []byte, fake func(string) string) []byte {
	v := bytes.TrimSpace(b)
	if len(v) == 0 {
		return b
	}
	start := bytes.Index(b, v)
	return slices.Concat(b[:start], []byte(fake(string(v))), b[start+len(v):])
}

// text scrubs free text: tool output, file content, environment values.
func (s *scrubber) text(b []byte) []byte {
	if !s.keepIDs {
		b = replaceAll(uuidText, b, 0, func(v string) string { return s.id(v, shapeLike) })
		b = replaceAll(guidText, b, 1, func(v string) string { return s.id(v, shapeLike) })
		b = replaceAll(labelledSerial, b, 1, func(v string) string {
			if isPlaceholder(v) || !strings.ContainsAny(v, "0123456789") {
				return v
			}
			return s.serial(v)
		})
	}
	b = replaceAll(macText, b, 0, func(v string) string { return s.id(v, shapeLike) })
	b = s.ipv6(b)
	b = s.ipv4(b)
	if !s.collecting {
		for _, v := range s.literals {
			if bytes.Contains(b, []byte(v)) {
				b = bytes.ReplaceAll(b, []byte(v), []byte(s.id(v, shapeLike)))
			}
		}
	}
	return b
}

// serial is id for serial numbers and other identifiers that are also
// replaced wherever they appear as they are (see isLiteralID).
func (s *scrubber) serial(v string) string {
	if s.collecting {
		s.literalSeen[v] = true
	}
	return s.id(v, shapeLike)
}

// id returns the fake for identifier v (v itself while collecting).
func (s *scrubber) id(v string, fake func(string, int) string) string {
	key := idKey(v)
	if s.collecting {
		s.seen[key] = true
		return v
	}
	n, ok := s.rank[key]
	if !ok {
		// Only text changed by an earlier replacement could show an
		// identifier the collection did not see; never let it through.
		return strings.Repeat("X", len(v))
	}
	return fake(v, n)
}

// idKey is the form under which an identifier is ranked: lower case,
// without colons, so the same UUID, MAC or GUID printed in upper and lower
// case, or as sysfs node_guid ("e41d:2d03:0060:1234") and as ibstat
// ("0xe41d2d0300601234"), gets the same number.
func idKey(v string) string {
	return strings.ToLower(strings.ReplaceAll(v, ":", ""))
}

// replaceAll replaces submatch group of every match of re in b by repl.
func replaceAll(re *regexp.Regexp, b []byte, group int, repl func(string) string) []byte {
	return replaceAllAt(re, b, group, func(v string, _, _ int) string { return repl(v) })
}

// replaceAllAt is replaceAll whose repl also gets where the group is in b.
func replaceAllAt(re *regexp.Regexp, b []byte, group int, repl func(v string, lo, hi int) string) []byte {
	ms := re.FindAllSubmatchIndex(b, -1)
	if ms == nil {
		return b
	}
	var out []byte
	last := 0
	for _, m := range ms {
		lo, hi := m[2*group], m[2*group+1]
		if lo < 0 {
			continue
		}
		out = append(out, b[last:lo]...)
		out = append(out, repl(string(b[lo:hi]), lo, hi)...)
		last = hi
	}
	return append(out, b[last:]...)
}

// ipv6 replaces IPv6 addresses other than loopback and unspecified.
// InfiniBand GIDs (sysfs ports/N/gids/M) have this form and embed the port
// GUID.
func (s *scrubber) ipv6(b []byte) []byte {
	return replaceFunc(ipv6Run, b, func(run []byte) []byte {
		lead, addr, trail := trimAddress(string(run))
		a, err := netip.ParseAddr(addr)
		if err != nil || !a.Is6() || a.IsLoopback() || a.IsUnspecified() {
			return run
		}
		return []byte(lead + s.id(addr, fakeIPv6) + trail)
	})
}

// trimAddress drops the characters around an IPv6 candidate that cannot
// belong to it: a single leading colon ("addr:fe80::1"), trailing dots.
func trimAddress(run string) (lead, addr, trail string) {
	addr = run
	if strings.HasPrefix(addr, ":") && !strings.HasPrefix(addr, "::") {
		lead, addr = ":", addr[1:]
	}
	t := strings.TrimRight(addr, ".")
	if strings.HasSuffix(t, ":") && !strings.HasSuffix(t, "::") {
		t = t[:len(t)-1]
	}
	return lead, t, addr[len(t):]
}

// ipv4 replaces dotted quads that are valid addresses, other than loopback
// and 0.0.0.0, except where they are part of a longer dotted or hyphenated
// token (firmware "fw-45.1.1.1", VBIOS "96.00.74.00.01") or on a line that
// names a version (vulkaninfo "conformanceVersion = 1.3.7.2").
func (s *scrubber) ipv4(b []byte) []byte {
	return replaceAllAt(ipv4Text, b, 0, func(v string, lo, hi int) string {
		a, err := netip.ParseAddr(v)
		if err != nil || a.IsLoopback() || a.IsUnspecified() || partOfToken(b, lo, hi) || onVersionLine(b, lo) {
			return v
		}
		return s.id(v, fakeIPv4)
	})
}

func partOfToken(b []byte, lo, hi int) bool {
	if lo > 0 && strings.IndexByte(".-_", b[lo-1]) >= 0 {
		return true
	}
	return hi < len(b)-1 && (b[hi] == '.' || b[hi] == '-') && isAlnum(b[hi+1])
}

func onVersionLine(b []byte, at int) bool {
	start := bytes.LastIndexByte(b[:at], '\n') + 1
	return bytes.Contains(bytes.ToLower(b[start:at]), []byte("version"))
}

// replaceFunc is regexp's ReplaceAllFunc without its copy of every match.
func replaceFunc(re *regexp.Regexp, b []byte, repl func([]byte) []byte) []byte {
	if !re.Match(b) {
		return b
	}
	return re.ReplaceAllFunc(b, repl)
}

// isPlaceholder reports values tools print where there is no serial
// ("N/A", "[Not Supported]" is refused earlier: it does not start with a
// letter or digit).
func isPlaceholder(v string) bool {
	switch strings.ToLower(strings.Trim(v, "[]")) {
	case "n/a", "na", "none", "unknown", "not", "0":
		return true
	}
	return false
}

// shapeLike returns a fake with the shape of v: every letter and digit
// becomes a digit of n, right-aligned, zeros before; separators stay. A
// UUID stays a UUID, a MAC a MAC, a 16-digit GUID 16 digits.
func shapeLike(v string, n int) string {
	digits := strconv.Itoa(n)
	out := []byte(v)
	j := len(digits) - 1
	for i := len(out) - 1; i >= 0; i-- {
		if !isAlnum(out[i]) {
			continue
		}
		if j >= 0 {
			out[i] = digits[j]
			j--
		} else {
			out[i] = '0'
		}
	}
	return string(out)
}

// fakeIPv4 numbers addresses in 240.0.0.0/8, reserved (RFC 1112 §4), never
// assigned to a host.
func fakeIPv4(_ string, n int) string {
	return fmt.Sprintf("240.%d.%d.%d", n>>16&0xff, n>>8&0xff, n&0xff)
}

// fakeIPv6 numbers addresses in 2001:db8::/32, the documentation prefix
// (RFC 3849).
func fakeIPv6(_ string, n int) string {
	return fmt.Sprintf("2001:db8::%x", n)
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
