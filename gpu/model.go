package gpu

import (
	"strings"
	"unicode"
)

// MatchesType reports whether typ, a GPU type as users write it
// (--gres=gpu:a100:2, --gpus h100:1), names the device model. Both are
// split into words at anything that is not a letter or digit and compared
// without case; every word of typ must be a word of the model, or several
// consecutive model words run together. So "a100" and "A100-40GB" match
// "NVIDIA A100-SXM4-40GB", "rtx4090" matches "NVIDIA GeForce RTX 4090",
// and "a10" matches neither A100 nor H100. An empty typ matches any model.
func MatchesType(model, typ string) bool {
	words := modelWords(model)
	for _, w := range modelWords(typ) {
		if !joinsWords(words, w) {
			return false
		}
	}
	return true
}

// FilterType keeps the devices whose model typ matches, in order.
func FilterType(devs []Device, typ string) []Device {
	if typ == "" {
		return devs
	}
	var out []Device
	for _, d := range devs {
		if MatchesType(d.Name, typ) {
			out = append(out, d)
		}
	}
	return out
}

func modelWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// joinsWords: w equals words[i] + ... + words[j] for some i <= j.
func joinsWords(words []string, w string) bool {
	for i := range words {
		rest := w
		for j := i; j < len(words) && strings.HasPrefix(rest, words[j]); j++ {
			rest = rest[len(words[j]):]
			if rest == "" {
				return true
			}
		}
	}
	return false
}
