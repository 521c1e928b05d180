#!/usr/bin/env sysbench
-- An iibench-style insert benchmark that needs sysbench 1.1: it asserts the
-- version, fills its string columns with sysbench.rand.varstring and picks the
-- rows its queries read with sysbench.rand.zipfian.  bench/statement_stream.py
-- --face11 compares the statements it sends under pysysbench
-- --sysbench-compat=1.1 with the 1.1.0 binary's.

assert(sysbench.version >= '1.1.0', "this script needs sysbench 1.1.0 or later")

sysbench.cmdline.options = {
   tables = {"Unused: one table (for the same command line as oltp_*.lua)", 1},
   table_size = {"Rows loaded by prepare", 200},
   inserts_per_event = {"Rows inserted per event", 3},
   queries_per_event = {"Point queries per event", 2},
}

local function create(con)
   con:query([[
CREATE TABLE iibench11 (
  id INTEGER NOT NULL,
  price FLOAT NOT NULL,
  customerid INTEGER NOT NULL,
  cashregisterid INTEGER NOT NULL,
  productid INTEGER NOT NULL,
  note VARCHAR(64) NOT NULL,
  PRIMARY KEY (id))]])
end

local next_id = 0

-- varstring draws any printable character: quotes and backslashes become '_'
-- so the text is a literal in MySQL and PostgreSQL alike
local function text(min, max)
   return (sysbench.rand.varstring(min, max):gsub("['\\]", "_"))
end

local function insert_row(con)
   next_id = next_id + 1
   con:query(string.format(
      "INSERT INTO iibench11 (id, price, customerid, cashregisterid, productid, note) " ..
      "VALUES (%d, %d.%02d, %d, %d, %d, '%s')",
      next_id, sysbench.rand.uniform(0, 499), sysbench.rand.uniform(0, 99),
      sysbench.rand.zipfian(1, 100000), sysbench.rand.uniform(1, 1000),
      sysbench.rand.zipfian(1, 10000), text(8, 64)))
end

function prepare()
   local con = sysbench.sql.driver():connect()
   create(con)
   for _ = 1, sysbench.opt.table_size do
      insert_row(con)
   end
end

function cleanup()
   local con = sysbench.sql.driver():connect()
   con:query("DROP TABLE IF EXISTS iibench11")
end

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
   next_id = 1000000 * (sysbench.tid + 1)
end

function thread_done()
   con:disconnect()
end

function event()
   for _ = 1, sysbench.opt.inserts_per_event do
      insert_row(con)
   end
   for _ = 1, sysbench.opt.queries_per_event do
      con:query(string.format(
         "SELECT id, price, note FROM iibench11 WHERE customerid = %d AND note >= '%s'",
         sysbench.rand.zipfian(1, 100000), text(1, 4)))
   end
end
