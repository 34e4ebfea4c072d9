package strace

import (
	"strings"
	"testing"
)

// decimalPlain is decimal one byte at a time.
func decimalPlain(b []byte, i int) (int64, int, bool) {
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	s := i
	var u uint64
	for ; i < len(b) && b[i]-'0' < 10; i++ {
		u = u*10 + uint64(b[i]-'0')
	}
	if i == s || i-s > 18 {
		return 0, 0, false
	}
	if neg {
		return -int64(u), i, true
	}
	return int64(u), i, true
}

// numberTexts are the texts the number readers are checked on: runs of
// digits of every length up to 20, of hex digits up to 18, followed by each
// kind of byte next to a digit's or a letter's range, at every offset of a
// longer text.
func numberTexts() []string {
	var texts []string
	stops := []string{"", " ", "]", "/", ":", "@", "G", "`", "g", "\t", "\xfa", "\xff", "\xb0", "\xc1", "\xe6", "0"}
	for n := 0; n <= 20; n++ {
		for _, stop := range stops {
			texts = append(texts, strings.Repeat("9", n)+stop+" tail", strings.Repeat("0", n)+stop, "-"+"1234567890123456789012"[:n]+stop)
		}
	}
	for n := 0; n <= 18; n++ {
		for _, stop := range stops {
			texts = append(texts, "7f3a10c00740aAbBcCdDeEfF9"[:n]+stop+"][TIMING] x", strings.Repeat("f", n)+stop, strings.Repeat("F", n)+stop+strings.Repeat("0", 20))
		}
	}
	return texts
}

func TestDecimalAsPlain(t *testing.T) {
	t.Parallel()
	for _, text := range numberTexts() {
		b := []byte(text)
		for i := 0; i <= len(b); i++ {
			v, end, ok := decimal(b, i)
			pv, pend, pok := decimalPlain(b, i)
			if v != pv || end != pend || ok != pok {
				t.Fatalf("decimal(%q, %d) = %d, %d, %v; one byte at a time: %d, %d, %v", text, i, v, end, ok, pv, pend, pok)
			}
		}
	}
}

func TestHex16AsPlain(t *testing.T) {
	t.Parallel()
	for _, text := range numberTexts() {
		b := []byte(text)
		for i := 0; i <= len(b); i++ {
			v, end, ok := hex16(b, i)
			pv, pend, pok := hex16Plain(b, i)
			if ok != pok || ok && (v != pv || end != pend) {
				t.Fatalf("hex16(%q, %d) = %#x, %d, %v; one byte at a time: %#x, %d, %v", text, i, v, end, ok, pv, pend, pok)
			}
		}
	}
}

// FuzzNumbers checks decimal and hex16 against their byte-at-a-time forms.
func FuzzNumbers(f *testing.F) {
	for _, text := range numberTexts() {
		f.Add([]byte(text), uint8(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, at uint8) {
		i := min(int(at), len(b))
		v, end, ok := decimal(b, i)
		pv, pend, pok := decimalPlain(b, i)
		if v != pv || end != pend || ok != pok {
			t.Fatalf("decimal(%q, %d) = %d, %d, %v; one byte at a time: %d, %d, %v", b, i, v, end, ok, pv, pend, pok)
		}
		h, hend, hok := hex16(b, i)
		ph, phend, phok := hex16Plain(b, i)
		if hok != phok || hok && (h != ph || hend != phend) {
			t.Fatalf("hex16(%q, %d) = %#x, %d, %v; one byte at a time: %#x, %d, %v", b, i, h, hend, hok, ph, phend, phok)
		}
	})
}

// BenchmarkPrefixNumbers reads a log prefix's mono_ns and thread and a
// span's fixed fields, eight bytes at a time and one by one:
//
//	go test ./strace -run XXX -bench PrefixNumbers
func BenchmarkPrefixNumbers(b *testing.B) {
	prefix := []byte("[mono_ns=5000391884][T0x7f3a2d5ff640][TIMING] emit_host_span: ")
	span := []byte("[STRACE] v=1 pid=4100 tid=4100 inv=1 hid=51a7c0de42f00d17 depth=2 name=chip.run.bind.runtime_init ts=5000391884 dur=238382 cpu_ns=231230")
	read := func(b *testing.B, dec func([]byte, int) (int64, int, bool), hex func([]byte, int) (uint64, int, bool)) {
		b.SetBytes(int64(len(prefix) + len(span)))
		b.ReportAllocs()
		var sum uint64
		for b.Loop() {
			v, _, _ := dec(prefix, len("[mono_ns="))
			h, _, _ := hex(prefix, len("[mono_ns=5000391884][T0x"))
			sum += uint64(v) + h
			for _, at := range [...]int{17, 26, 35, 66} { // pid, tid, inv, depth
				v, _, _ := dec(span, at)
				sum += uint64(v)
			}
			h, _, _ = hex(span, 41)
			v, _, _ = dec(span, 102) // ts
			sum += uint64(v) + h
		}
		if sum == 1 {
			b.Log(sum)
		}
	}
	b.Run("words", func(b *testing.B) { read(b, decimal, hex16) })
	b.Run("bytes", func(b *testing.B) { read(b, decimalPlain, hex16Plain) })
}
