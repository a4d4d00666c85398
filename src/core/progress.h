// A one-line progress bar on stderr ("kiln: building [#####     ] 23/57"), drawn only when
// stderr is a terminal (and KILN_NO_PROGRESS is unset), so logs and pipes stay clean.
#pragma once
#include <string>

namespace kiln {

class ProgressBar {
 public:
  ProgressBar(std::string label, int total);
  ~ProgressBar();  // erases the line
  void update(int done);

 private:
  std::string label_;
  int total_;
  bool enabled_;
  int drawn_ = -1;
};

}  // namespace kiln
