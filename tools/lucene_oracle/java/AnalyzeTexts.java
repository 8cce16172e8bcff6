import io.anserini.analysis.AnalyzerUtils;
import io.anserini.analysis.DefaultEnglishAnalyzer;
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;

public class AnalyzeTexts {
  public static void main(String[] args) throws Exception {
    String all = new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8);
    DefaultEnglishAnalyzer analyzer = DefaultEnglishAnalyzer.newDefaultInstance();
    try (Writer out = new BufferedWriter(new OutputStreamWriter(
        new FileOutputStream(args[1]), StandardCharsets.UTF_8))) {
      for (String text : all.split("\u0000", -1)) {
        out.write(String.join(" ", AnalyzerUtils.analyze(analyzer, text)));
        out.write("\n");
      }
    }
  }
}
