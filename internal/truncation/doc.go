// Package truncation undoes the overlaps the runtime's truncating ns
// conversion makes of device boundaries stamped at the same cycle.
//
// The runtime's ns conversion can move a logged
// device boundary against another that the device stamped at the same
// cycle. The runtime logs ts = int(double(start−origin)/freq·1e9) and
// dur = int(double(end−start)/freq·1e9) separately, each truncated, and
// each computed with a relative rounding error under 2^-51, which is below
// 1/3 ns for offsets under 10^14 ns (a day). So a logged start lies in
// (s−1−ε, s+ε] of the true start s and a logged end ts+dur in
// (e−2−2ε, e+2ε] of the true end e. Two phases that abut on the device
// (one's end cycle is the next one's start) can therefore appear to
// overlap by at most 1 ns; a child that ends at its parent's end cycle can
// appear to end up to 2 ns past it; a child that starts at its parent's
// start cycle can appear to start up to 1 ns before it. 2 ns covers all
// three.
//
// The root counts each repair under ReasonTruncation.
package truncation
