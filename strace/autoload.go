package strace

// Autoload is a torch_backend_autoload record: the state of PyTorch's
// backend autoload as the process saw it once torch was imported.
//
//	torch_backend_autoload setting=<text> [raw=<null or JSON string> raw_truncated=<bool>] effective=<text> torch_imported=<bool> torch_npu_loaded=<bool>
//
// The fields are separated by exactly one space. Older emitters write no raw
// and raw_truncated fields. Text after torch_npu_loaded, separated by a
// blank, is not part of the record.
type Autoload struct {
	// Text is the record from "torch_backend_autoload" to its
	// torch_npu_loaded value. Two records with the same Text report the
	// same state.
	Text string

	Setting string // the setting as the process read it; never empty, no blank
	// Raw is the raw field's JSON text as written: null or a quoted string
	// with its escapes. It is "" when the emitter wrote no raw field.
	Raw            string
	RawTruncated   bool   // the emitter cut the raw value
	Effective      string // the state that took effect; never empty, no blank
	TorchImported  bool
	TorchNPULoaded bool
}

var markAutoload = []byte("torch_backend_autoload setting=")

// autoload handles a torch_backend_autoload head at at.
func (r *Reader) autoload(rec *Record, at int) bool {
	line := r.line
	r.stats.Heads.Autoload++
	end := r.boundary(line, at+len(markAutoload))
	r.pos = end
	p := parser{b: trimRight(line[at:end]), i: len(markAutoload)}
	var a Autoload
	var setting, raw, effective [2]int
	ok := p.token(&setting, "setting") && p.sep("setting")
	if ok && p.i < len(p.b) && p.b[p.i] == 'r' {
		ok = p.key("raw=") && p.jsonText(&raw, "raw") && p.sep("raw") &&
			p.key("raw_truncated=") && p.boolean(&a.RawTruncated, "raw_truncated") && p.sep("raw_truncated")
	}
	_ = ok && p.key("effective=") && p.token(&effective, "effective") && p.sep("effective") &&
		p.key("torch_imported=") && p.boolean(&a.TorchImported, "torch_imported") && p.sep("torch_imported") &&
		p.key("torch_npu_loaded=") && p.boolean(&a.TorchNPULoaded, "torch_npu_loaded")
	textEnd := p.i
	last := "torch_npu_loaded"
	if p.st == stOK && p.tail(last) && !p.atEnd() {
		last = "trailing text"
	}
	r.cut(&p, end, last)
	if p.st != stOK {
		r.lost(at, &p)
		return false
	}
	r.begin(rec, KindAutoload, at)
	r.join(rec, end)
	rec.Prefix = r.prefixAt(at)
	a.Text = r.memory.arena.str(p.b[:textEnd])
	a.Setting = a.Text[setting[0]:setting[1]]
	a.Raw = a.Text[raw[0]:raw[1]]
	a.Effective = a.Text[effective[0]:effective[1]]
	rec.Autoload = a
	return true
}

// appendAutoload appends the record's text, built from its fields.
func appendAutoload(dst []byte, a *Autoload) []byte {
	dst = append(dst, markAutoload...)
	dst = append(dst, a.Setting...)
	if a.Raw != "" {
		dst = append(dst, " raw="...)
		dst = append(dst, a.Raw...)
		dst = append(dst, " raw_truncated="...)
		dst = appendBool(dst, a.RawTruncated)
	}
	dst = append(dst, " effective="...)
	dst = append(dst, a.Effective...)
	dst = append(dst, " torch_imported="...)
	dst = appendBool(dst, a.TorchImported)
	dst = append(dst, " torch_npu_loaded="...)
	return appendBool(dst, a.TorchNPULoaded)
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

// sep consumes the single space after field.
func (p *parser) sep(field string) bool {
	switch {
	case p.atEnd():
		return p.fail(stTorn, field, "nothing after it")
	case p.b[p.i] != ' ':
		return p.fail(stMalformed, field, "expected a space after it")
	}
	p.i++
	return true
}

// token reads one or more bytes up to the next blank into span.
func (p *parser) token(span *[2]int, field string) bool {
	s := p.i
	for p.i < len(p.b) && p.b[p.i] != ' ' && p.b[p.i] != '\t' {
		p.i++
	}
	if p.i == s {
		if p.atEnd() {
			return p.fail(stTorn, field, "no value")
		}
		return p.fail(stMalformed, field, "expected a value")
	}
	*span = [2]int{s, p.i}
	return true
}

// boolean reads true or false.
func (p *parser) boolean(dst *bool, field string) bool {
	rest := p.b[p.i:]
	for _, w := range [...]string{"true", "false"} {
		if len(rest) >= len(w) && string(rest[:len(w)]) == w {
			p.i += len(w)
			*dst = w == "true"
			return true
		}
		if len(rest) < len(w) && string(rest) == w[:len(rest)] {
			return p.fail(stTorn, field, "no value")
		}
	}
	return p.fail(stMalformed, field, "expected true or false")
}

// jsonText reads null or a JSON string (its quotes and escapes kept) into
// span.
func (p *parser) jsonText(span *[2]int, field string) bool {
	s, rest := p.i, p.b[p.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "null":
		p.i += 4
		*span = [2]int{s, p.i}
		return true
	case len(rest) < 4 && string(rest) == "null"[:len(rest)]:
		return p.fail(stTorn, field, "no value")
	case rest[0] != '"':
		return p.fail(stMalformed, field, "expected null or a JSON string")
	}
	for i := 1; i < len(rest); i++ {
		switch rest[i] {
		case '\\':
			i++
		case '"':
			p.i += i + 1
			*span = [2]int{s, p.i}
			return true
		}
	}
	p.i = len(p.b)
	return p.fail(stTorn, field, "the string does not end")
}
