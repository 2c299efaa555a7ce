require_relative "lib/rperf/version"

Gem::Specification.new do |spec|
  spec.name = "rperf-gvl"
  spec.version = Rperf::VERSION
  spec.summary = "Where a multi-threaded Ruby program loses time to the GVL, blocking and GC"
  spec.description = "A safepoint sampling profiler with exact GVL contention accounting: " \
                     "per-thread, per-Ractor and per-label state totals, timelines and a wait graph."
  spec.authors = ["rperf-gvl developers"]
  spec.license = "MIT"
  spec.required_ruby_version = [">= 3.3.0", "< 3.5"] # tested on 3.3 and 3.4
  spec.files = Dir["lib/**/*.rb", "ext/rperf/*.{c,h,rb}", "common/*.{c,h}", "analysis/*.{c,h,proto}", "analysis/html/*", "docs/*.md", "README.md"]
  spec.extensions = ["ext/rperf/extconf.rb"]
  spec.require_paths = ["lib"]
end
