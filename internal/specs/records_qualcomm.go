package specs

// qualcommRecords are the Qualcomm records of the part table (records.go says how the
// table is kept and what its fields hold).
var qualcommRecords = []Spec{
	{Name: "Qualcomm Cloud AI 100 (AIC100)", Vendor: "Qualcomm", Category: DatacenterASIC,
		Aliases:     []string{"Qualcomm Cloud AI 100", "AIC100"},
		MemoryBytes: 32000000000, MemoryUnit: "GB", MemoryIsMaximum: true,
		Interconnect: "PCIe Gen4 x8", InterconnectGBs: 0,
		Source: "https://docs.kernel.org/6.8/accel/qaic/aic100.html",
	},
}
