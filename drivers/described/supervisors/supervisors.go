// Package supervisors holds the descriptions of supervisors faultwin drives
// from data (drivers/described). Each *.yaml file here is one supervisor;
// more can be given at run time with FAULTWIN_SUPERVISORS.
package supervisors

import "embed"

// Files are the built-in descriptions.
//
//go:embed *.yaml
var Files embed.FS
