package model

// EditDistance is the Levenshtein distance of two short ASCII words (the
// first is cut at 64 bytes): the catalog's name suggestions use it, and so
// does the command's "did you mean" for flags and commands.
func EditDistance(a, b string) int { return editDistance(a, b) }
