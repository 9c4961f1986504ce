package q1

// TableStages is the key of the result's stage breakdown table
// (result.Table.Key): the answer figure finds it by this key, whatever
// its title says.
const TableStages = "stages"
