# frozen_string_literal: true

# Loaded into the server tests' children (RUBYOPT). nio4r 2.5.8's pure-Ruby
# selector drains its wake-up pipe with read(pipe.stat.size), and a pipe's
# stat size is 0 on Linux: the pipe stays readable and the selector spins a
# core from its first wake-up on. The children run nio4r in pure Ruby (its
# C extension is not built for the project's Ruby), so the pipe's #stat
# answers its readable byte count. A test harness fix, not the profiler's.
require "io/wait"

module NioPipeDrain
  Size = Struct.new(:size)

  def initialize(*args, **kw)
    super
    wakeup = @wakeup
    wakeup.define_singleton_method(:stat) { Size.new(nread) } if wakeup.is_a?(IO)
  end
end

begin
  require "nio"
  NIO::Selector.prepend(NioPipeDrain) if NIO.engine == "ruby"
rescue LoadError
  nil # not a server child with nio4r on its load path
end
