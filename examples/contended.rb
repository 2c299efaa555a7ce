# A contended workload: four CPU-bound "request" threads fight for the GVL,
# two IO threads mostly sleep or read pipes, and one "report" thread hogs the
# GVL in long C calls (Array#sort) that never give it up. Each thread carries
# an `endpoint` label, so the report can say which requests made which wait.
#
#   ruby -Ilib -Ibuild/ext examples/contended.rb [report.json]
require "rperf"

def fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2)

out = ARGV[0] || "report.json"

report = Rperf.contention(frequency: 1000) do
  cpu = 4.times.map do |i|
    Thread.new do
      Thread.current.name = "cpu-#{i}"
      Rperf.label(endpoint: "GET /users/:id") { 50.times { fib(23) } }
    end
  end
  hog = Thread.new do
    Thread.current.name = "report-hog"
    Rperf.label(endpoint: "GET /report") do
        # One long C call (Array#sort) that never offers the GVL to others.
        data = Array.new(3_000_000) { |k| (k * 7919) % 1_000_003 }
        2.times { data.sort }
      end
  end
  io = 2.times.map do |i|
    Thread.new do
      Thread.current.name = "io-#{i}"
      Rperf.label(endpoint: "GET /health") do
        r, w = IO.pipe
        100.times { w.write("x"); r.read(1); sleep 0.005 }
      end
    end
  end
  (cpu + [hog] + io).each(&:join)
end

report.save(out)
puts report.to_summary
puts
puts report.to_timeline
warn "wrote #{out}"
