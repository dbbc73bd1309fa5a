package plan

import (
	"fmt"
	"strings"
)

// explainChoice is the explanation of a choice, written from what the
// search recorded (choose): which levels were tried, where the plan was
// found, why better levels were not taken, and what the request could ask
// for when nothing fits. The lines about the plan itself (describe,
// describeReplicas, engine notes) are added by each answer.
func explainChoice(ch *choice) []string {
	out := []string{ch.LevelsWhy}
	if ch.HostOnly {
		out = append(out, "no accelerator is available: planning on host RAM")
	}
	switch ch.Outcome {
	case outcomeNoDevices:
		return append(out, "does not fit: no available device with known memory (requested devices: "+strings.Join(ch.Devices, ", ")+")")
	case outcomeFits, outcomeFitsOnHost:
		if ch.Outcome == outcomeFitsOnHost {
			out = append(out, "include_cpu: no accelerator plan fits, so host RAM is used")
		}
		return append(out, explainRejected(ch.Rows, string(ch.Plan.Level))...)
	}
	if ch.OffloadWithReplicas {
		out = append(out, "cpu_offload is not combined with replicas: the replicas would share one host's RAM and PCIe")
	}
	if ch.Outcome == outcomeFitsOffloaded {
		out = append(out, explainRejected(ch.Rows, string(ch.Plan.Level))...)
		return append(out, "cpu_offload: no level fits on the accelerators alone, so the layers that do not fit stay in host RAM; decode is bound by PCIe")
	}
	out = append(out, explainRejected(ch.Rows, "")...)
	if ch.CouldOffload {
		out = append(out, "cpu_offload: true would keep the layers that do not fit in host RAM, at PCIe speed")
	}
	if ch.CouldIncludeCPU {
		out = append(out, "include_cpu: true would plan on host RAM (the CPU) when no accelerator has room")
	}
	return out
}

// explainRejected is one line per level better than the chosen one (all
// levels when chosen is "") saying why it was not taken, and one for the
// chosen level.
func explainRejected(rows []LevelRow, chosen string) []string {
	var out []string
	for _, r := range rows {
		if chosen != "" && r.Quant == chosen {
			if r.Fits {
				out = append(out, fmt.Sprintf("%s fits (%s, %s for one replica)", r.Quant, r.Strategy, gib(r.TotalBytes)))
			} else {
				out = append(out, fmt.Sprintf("%s chosen with cpu_offload (%s for one replica)", r.Quant, gib(r.TotalBytes)))
			}
			return out
		}
		if !r.Fits {
			out = append(out, fmt.Sprintf("%s rejected: %s", r.Quant, r.Reason))
		}
	}
	return out
}
