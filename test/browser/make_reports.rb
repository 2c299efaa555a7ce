# frozen_string_literal: true

# make_reports.rb — profiles small real workloads for the browser tests:
#   ractors.json      threads in the main Ractor and two other Ractors
#   snapshot-N.json   a snapshot series (3 reports of one process)
#   empty.json        a profile of a block that does nothing
#   longnames.json    names and labels far longer than the page shows
# (the demo report comes from examples/contended.rb itself).
#
#   ruby -I lib -I build/ext test/browser/make_reports.rb OUTDIR
require "json"
require "rperf"

out = ARGV.fetch(0)
Warning[:experimental] = false

def fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2)

# Rperf.snapshot/stop give the rperf-0.7 result Hash (with the report under
# :report) or a report object that saves itself.
def save_result(result, path)
  if result.respond_to?(:save)
    result.save(path)
  else
    File.write(path, JSON.generate(result.fetch(:report)))
  end
end

report = Rperf.contention(frequency: 1000) do
  ractors = 2.times.map { |i| Ractor.new(i) { |k| fib(22 + k) } }
  threads = 2.times.map do |i|
    Thread.new do
      Thread.current.name = "main-ractor-#{i}"
      Rperf.label(job: "fib") { fib(23) }
    end
  end
  threads.each(&:join)
  ractors.each(&:take)
end
report.save(File.join(out, "ractors.json"))

# A snapshot series whose workers live through all three reports (one lane
# per worker in each page), with the timeline Rperf.start leaves off by default.
Rperf.start(mode: :wall, frequency: 1000, timeline: true)
release = Queue.new
workers = 3.times.map do |i|
  Thread.new do
    Thread.current.name = "w#{i}"
    Rperf.label(step: "work") { 6.times { fib(20); sleep 0.01 } }
    release.pop
  end
end
2.times do |n|
  sleep 0.04
  save_result(Rperf.snapshot(clear: true), File.join(out, "snapshot-#{n + 1}.json"))
end
sleep 0.05
save_result(Rperf.stop, File.join(out, "snapshot-3.json"))
3.times { release << true }
workers.each(&:join)

Rperf.contention { nil }.save(File.join(out, "empty.json"))

# Names far longer than the page shows: a 1 MiB thread name, a long label
# value of two-byte characters, a long method name (the page keeps
# RGA_HTML_MAX_TEXT bytes of each, cut at a character).
long_method = :"m#{"x" * 5000}"
Object.define_method(long_method) { fib(21) }
report = Rperf.contention(frequency: 1000) do
  2.times.map do
    Thread.new do
      Thread.current.name = "n" * (1 << 20)
      Rperf.label(k: "é" * 4000) { 3.times { __send__(long_method) } }
    end
  end.each(&:join)
end
report.save(File.join(out, "longnames.json"))
