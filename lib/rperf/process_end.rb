# frozen_string_literal: true

module Rperf
  # Runs a block when this process's program is over: after every at_exit
  # and after Ruby has ended the program's other threads. It is an object
  # finalizer, which Ruby runs at exit after both. An at_exit that writes a
  # report releases the GVL while it writes: the program's other threads run
  # on meanwhile and see the main thread stopped, which they never do without
  # the profiler. GC.stress is switched off first: the program is over, and
  # every allocation the report makes would otherwise be a full GC. The block
  # does not run in forked children, nor after exit!.
  module ProcessEnd
    # Objects whose finalizers are the registered blocks, alive until exit.
    @anchors = []

    class << self
      def register(&block)
        anchor = Object.new
        ObjectSpace.define_finalizer(anchor, finalizer(Process.pid, block))
        @anchors << anchor
        anchor
      end

      private

      # Made apart from register so the proc does not reference the anchor.
      def finalizer(pid, block)
        proc do
          next unless Process.pid == pid

          GC.stress = false
          block.call
        end
      end
    end
  end
end
