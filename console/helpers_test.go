package console_test

import (
	"io/fs"

	"github.com/pitboss/pitboss/console"
)

func fsRead(name string) (string, error) {
	b, err := fs.ReadFile(console.Assets(), name)
	return string(b), err
}
