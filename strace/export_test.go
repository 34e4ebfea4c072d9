package strace

// Hooks for the tests of package strace_test, which can use stracetest
// (the tests of package strace cannot: stracetest imports strace).
var (
	ReadAllForTest      = readAll
	DumpForTest         = dump
	LogOptionsForTest   = logOptions
	HandMadeLogsForTest = handMadeLogs
	GenerateLogForTest  = generateLog
)
