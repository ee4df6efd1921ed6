const path = require("path");

/* Joins a file name
   onto the base folder. */
function join(base, name) {
  return path.join(base, name);
}

module.exports = { join };
