// Package yamlx holds what the YAML loaders of checks and waivers share on
// top of yaml.v3: alias expansion with a budget (no "billion laughs"), and
// the line of a field or of a decoder error in the user's file.
package yamlx
