/*
 * errors.c — defines Rperf::Error and its subclasses. It does NOT raise.
 */
#include "errors.h"

VALUE rperf_eError;
VALUE rperf_eStateError;
VALUE rperf_eResourceError;
VALUE rperf_eReportError;
VALUE rperf_eRenderError;
VALUE rperf_eUnsupportedError;

void
rperf_errors_define(VALUE mRperf)
{
    rperf_eError = rb_define_class_under(mRperf, "Error", rb_eStandardError);
    rperf_eStateError = rb_define_class_under(mRperf, "StateError", rperf_eError);
    rperf_eResourceError = rb_define_class_under(mRperf, "ResourceError", rperf_eError);
    rperf_eReportError = rb_define_class_under(mRperf, "ReportError", rperf_eError);
    rperf_eRenderError = rb_define_class_under(mRperf, "RenderError", rperf_eError);
    rperf_eUnsupportedError = rb_define_class_under(mRperf, "UnsupportedError", rperf_eError);
}
