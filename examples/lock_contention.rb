# Lock contention, not GVL contention: six workers share one "connection"
# guarded by a Mutex and hold it around slow IO-like work (a sleep, which
# releases the GVL). The GVL is free almost all the time, yet the workers
# spend most of their lives blocked, waiting for the lock; the report says
# so (blocked on "mutex", released by the thread that held it), where the
# GVL figures alone would only say "blocked".
#
#   ruby -Ilib -Ibuild/ext examples/lock_contention.rb [report.json]
require "json"
require "rperf"

out = ARGV[0]
connection = Mutex.new

report = Rperf.contention(frequency: 1000) do
  workers = 6.times.map do |i|
    Thread.new do
      Thread.current.name = "worker-#{i}"
      Rperf.label(job: "sync") do
        5.times do
          connection.synchronize { sleep 0.02 } # the query, under the lock
          sleep 0.002 # a little work of its own between queries
        end
      end
    end
  end
  workers.each(&:join)
end

puts report.summary
report.save(out) if out

# The same report read as report.json: where the blocked time went, and who
# held the lock the waiters were waiting for.
doc = JSON.parse(report.to_json)
names = doc["threads"].to_h { |t| [t["seq"], t["name"].empty? ? "##{t['seq']}" : t["name"]] }
puts
puts "Blocked by cause (ms)"
doc["threads"].each do |t|
  causes = t.fetch("blocked_by_cause", {}).map { |cause, ns| format("%s %.0f", cause, ns / 1e6) }
  puts format("  %-10s gvl_wait %5.1f  blocked %5.0f: %s", names[t["seq"]], t["gvl_wait_ns"] / 1e6,
              t["blocked_ns"] / 1e6, causes.join(", "))
end
puts "Top releasers (who held the lock others waited for)"
doc.fetch("blocked_edges", []).group_by { |e| [e["releaser"], e["cause"]] }
   .map { |(releaser, cause), edges| [names[releaser], cause, edges.sum { |e| e["blocked_ns"] }] }
   .sort_by { -_1[2] }.first(5)
   .each { |name, cause, ns| puts format("  %-10s %-6s %6.0f ms", name, cause, ns / 1e6) }
