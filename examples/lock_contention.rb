# Lock contention, not GVL contention: six workers share one "connection"
# guarded by a Mutex and hold it around slow IO-like work (a sleep, which
# releases the GVL). The GVL is free almost all the time, yet the workers
# spend most of their lives blocked, waiting for the lock; the report says
# so (blocked on "mutex", released by the thread that held it, from the code
# that held it: "Top release stacks"), where the GVL figures alone would
# only say "blocked". "Root causes" follows each wait through the waiters
# Ruby woke one at a time, to the worker sleeping inside the lock.
#
#   ruby -Ilib -Ibuild/ext examples/lock_contention.rb [report.json]
#   build/bin/rperf-gvl report.json --edges all --svg waitgraph.svg
#   build/bin/rperf-gvl report.json --critical-path worker-3
require "rperf"

out = ARGV[0]
connection = Mutex.new

# The query, under the lock: the release stacks name this method.
def run_query(connection)
  connection.synchronize { sleep 0.02 }
end

report = Rperf.contention(frequency: 1000) do
  workers = 6.times.map do |i|
    Thread.new do
      Thread.current.name = "worker-#{i}"
      Rperf.label(job: "sync") do
        5.times do
          run_query(connection)
          sleep 0.002 # a little work of its own between queries
        end
      end
    end
  end
  workers.each(&:join)
end

puts report.to_summary
report.save(out) if out
