package gpu

// MIGProfileFor chooses the MIG profile that serves a share of amount
// hundredths on dev, where the whole device is worth perGPU. ok is false
// when dev is not in MIG mode or no profile is large enough.
//
// The rule: a share is a fraction f = amount/perGPU of the device, and a
// profile fits it when both its memory (in eighths of the card, the way
// NVIDIA names profiles) and its compute slices (out of MIGSlices) are at
// least f. Among fitting plain profiles (no media-extension or graphics
// variants) the smallest wins: fewest memory eighths, then fewest slices,
// then lowest profile id. On an A100-40GB with one fGPU per GPU, 0.25 gets
// 2g.10gb (2/8 memory, 2/7 compute), 0.5 gets 4g.20gb (3g.20gb has only
// 3/7 of the compute) and a whole device gets 7g.40gb.
func MIGProfileFor(dev Device, amount, perGPU Hundredths) (MIGProfile, bool) {
	if !dev.MIGEnabled || dev.MIGSlices <= 0 || amount <= 0 || perGPU <= 0 || amount > perGPU {
		return MIGProfile{}, false
	}
	best, found := MIGProfile{}, false
	for _, p := range dev.MIG {
		if p.Variant != "" || !profileHolds(p, dev.MIGSlices, amount, perGPU) {
			continue
		}
		if !found || smallerProfile(p, best) {
			best, found = p, true
		}
	}
	return best, found
}

// profileHolds: memEighths/8 >= amount/perGPU and slices/total >= amount/perGPU,
// compared exactly by cross-multiplying.
func profileHolds(p MIGProfile, totalSlices int, amount, perGPU Hundredths) bool {
	a, c := int64(amount), int64(perGPU)
	return int64(p.MemEighths)*c >= 8*a && int64(p.Slices)*c >= int64(totalSlices)*a
}

func smallerProfile(a, b MIGProfile) bool {
	if a.MemEighths != b.MemEighths {
		return a.MemEighths < b.MemEighths
	}
	if a.Slices != b.Slices {
		return a.Slices < b.Slices
	}
	return a.ID < b.ID
}

// MIGCharge is what a share served by profile p counts against its device,
// in hundredths: the larger of its memory and compute fractions times the
// device's worth, rounded down. It is never less than the amount that
// chose p, and seven 1g instances on an A100 (1/7 compute each) still add
// up to at most one device. The charge is conservative: some legal mixes
// (4g.20gb with 3g.20gb) add up to more than one device and are refused;
// the node's instance creation stays the final word on placement.
func MIGCharge(p MIGProfile, totalSlices int, perGPU Hundredths) Hundredths {
	if totalSlices <= 0 {
		return perGPU
	}
	c := int64(perGPU)
	mem := int64(p.MemEighths) * c / 8
	compute := int64(p.Slices) * c / int64(totalSlices)
	return Hundredths(min(max(mem, compute), c))
}
