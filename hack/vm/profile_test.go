package main

import "testing"

func TestProfileFile(t *testing.T) {
	for series, want := range map[string]string{
		"":     "docs/profile-report.md",
		"6.1":  "docs/profile-report.md",
		"6.12": "docs/profile-report-linux-6.12.md",
		"6.18": "docs/profile-report-linux-6.18.md",
	} {
		if got := profileFile(series); got != want {
			t.Errorf("profileFile(%q) = %q, want %q", series, got, want)
		}
	}
}

func TestProfileSchedFile(t *testing.T) {
	for series, want := range map[string]string{
		"":     "docs/profile-sched-linux-6.1.md",
		"6.1":  "docs/profile-sched-linux-6.1.md",
		"6.12": "docs/profile-sched-linux-6.12.md",
	} {
		if got := profileSchedFile(series); got != want {
			t.Errorf("profileSchedFile(%q) = %q, want %q", series, got, want)
		}
	}
}

func TestProfileInfos(t *testing.T) {
	console := "boot...\r\nPROFILE-INFO: kernel=6.12.57+deb13-amd64\r\nPROFILE-BEGIN\nreport\nPROFILE-END\n"
	if got := profileInfos(console)["kernel"]; got != "6.12.57+deb13-amd64" {
		t.Errorf("kernel = %q", got)
	}
	if got := profileInfos("no info\n")["kernel"]; got != "" {
		t.Errorf("without the line: kernel = %q, want none", got)
	}
}
