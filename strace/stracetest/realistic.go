package stracetest

// Realistic returns the configuration of a log of about size bytes shaped
// as the runtime writes one, the bundled sample's shape made longer: an L3
// parent driving two chip ranks, rank 0 pipelined, rank 1 logging its bind
// breakdown as legacy lines and wrapped by an external producer, device
// clock anchors every 100 ms. It is the shape the converter's benchmarks
// measure, and the same size always gives the same log.
func Realistic(size int64) Config {
	cfg := Config{Seed: 99, AnchorEvry: 100_000_000, Pipelined: true, Legacy: true, Ext: true}
	cfg.Rounds = RoundsFor(cfg, size)
	return cfg
}

// RoundsFor returns the Rounds that make cfg's log about size bytes long
// (at least 1), estimated from the length of its log of 64 rounds.
func RoundsFor(cfg Config, size int64) int {
	const sample = 64
	cfg.Rounds = sample
	var n countWriter
	Generate(&n, cfg)
	per := max(int64(n)/sample, 1)
	return int(max(size, 0)/per) + 1
}

// countWriter counts the bytes written to it.
type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
