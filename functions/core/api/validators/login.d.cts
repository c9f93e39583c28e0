import schema = require('./schema.d.cts');
export = schema;
