# frozen_string_literal: true

# check_ext_graph.rb — fails when the extension's parts depend on each other
# in a circle.
#
#   ruby check_ext_graph.rb EXT_SOURCE_DIR EXT_OBJECT_DIR
#
# A part is a file pair (x.c + x.h, or a header alone). Two graphs are
# checked, each at that level:
# - includes: part A -> part B when a file of A has `#include "b.h"`;
# - calls: part A -> part B when A's object file needs (nm -u) a symbol
#   that B's object file defines (nm -g --defined-only), i.e. A calls B or
#   reads B's data.
# Every strongly connected component with more than one part is printed
# as a circle (A -> B -> ... -> A) and the script exits 1. Otherwise it
# prints the parts bottom-up (each after everything it uses) and exits 0.
# It refuses to pass vacuously: too few object files or edges is an error.

require "open3"
require "set"

src_dir, obj_dir = ARGV
abort("usage: check_ext_graph.rb EXT_SOURCE_DIR EXT_OBJECT_DIR") unless src_dir && obj_dir

def part_of(path) = File.basename(path).sub(/\.[ch]\z/, "")

sources = Dir[File.join(src_dir, "*.{c,h}")].sort
parts = sources.map { |f| part_of(f) }.to_set

includes = Hash.new { |h, k| h[k] = Set.new }
sources.each do |file|
  from = part_of(file)
  File.foreach(file) do |line|
    next unless (m = line.match(/\A\s*#\s*include\s+"([^"]+)"/))
    to = part_of(m[1])
    includes[from] << to if parts.include?(to) && to != from
  end
end

def nm(*args)
  out, err, status = Open3.capture3("nm", *args)
  abort("check_ext_graph: nm #{args.join(' ')} failed: #{err}") unless status.success?
  out.lines.map { |l| l.split.last }.compact
end

objects = sources.grep(/\.c\z/).map { |f| [part_of(f), File.join(obj_dir, "#{part_of(f)}.o")] }
                 .select { |_, o| File.exist?(o) }.to_h
abort("check_ext_graph: only #{objects.size} object files in #{obj_dir}: build the extension first") if objects.size < 10

definer = {}
objects.each do |part, obj|
  nm("-g", "--defined-only", obj).each do |sym|
    abort("check_ext_graph: #{sym} defined by both #{definer[sym]} and #{part}") if definer[sym] && definer[sym] != part
    definer[sym] = part
  end
end
calls = Hash.new { |h, k| h[k] = Set.new }
objects.each do |part, obj|
  nm("-u", obj).each do |sym|
    to = definer[sym]
    calls[part] << to if to && to != part
  end
end

include_edges = includes.values.sum(&:size)
call_edges = calls.values.sum(&:size)
abort("check_ext_graph: #{include_edges} include and #{call_edges} call edges: nothing was read") if include_edges < 10 || call_edges < 10

# Tarjan's strongly connected components.
def components(nodes, edges)
  index = {}
  low = {}
  stack = []
  on_stack = Set.new
  result = []
  counter = 0
  visit = lambda do |v|
    index[v] = low[v] = counter
    counter += 1
    stack.push(v)
    on_stack << v
    edges[v].each do |w|
      if !index.key?(w)
        visit.call(w)
        low[v] = [low[v], low[w]].min
      elsif on_stack.include?(w)
        low[v] = [low[v], index[w]].min
      end
    end
    next unless low[v] == index[v]
    comp = []
    loop do
      w = stack.pop
      on_stack.delete(w)
      comp << w
      break if w == v
    end
    result << comp
  end
  nodes.sort.each { |v| visit.call(v) unless index.key?(v) }
  result # reverse topological order: each component after those it reaches
end

# One circle through `start` inside its component (breadth-first back to it).
def circle(start, comp, edges)
  members = comp.to_set
  prev = { start => nil }
  queue = [start]
  until queue.empty?
    v = queue.shift
    edges[v].each do |w|
      next unless members.include?(w)
      if w == start
        path = [v]
        path.unshift(prev[path.first]) while prev[path.first]
        return path + [start]
      end
      next if prev.key?(w)
      prev[w] = v
      queue << w
    end
  end
  comp
end

failed = false
order = nil
{ "include" => includes, "call" => calls }.each do |kind, edges|
  nodes = (kind == "include" ? parts.to_a : objects.keys).to_set
  edges.each { |from, tos| nodes << from; nodes.merge(tos) }
  comps = components(nodes.to_a, edges)
  comps.select { |c| c.size > 1 }.each do |comp|
    failed = true
    puts "check_ext_graph: #{kind} circle: #{circle(comp.min, comp, edges).join(' -> ')} " \
         "(all of #{comp.sort.join(', ')} reach each other)"
  end
  order = comps.flatten if kind == "call"
  puts "#{kind} graph: #{nodes.size} parts, #{edges.values.sum(&:size)} edges"
end
exit 1 if failed
puts "no circle; parts bottom-up: #{order.join(' ')}"
