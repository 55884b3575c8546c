; vec_matvec.ll: y[row] = dot(m[row, :], x) with <4 x float> loads and fused multiply-adds.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()

define amdgpu_kernel void @matvec(ptr addrspace(1) noalias %y, ptr addrspace(1) noalias readonly %m,
                                  ptr addrspace(1) noalias readonly %x, i32 %cols4) #0 {
entry:
  %lid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %gid, 5
  %row = add nuw nsw i32 %base, %lid
  %rowoff = mul i32 %row, %cols4
  %has = icmp sgt i32 %cols4, 0
  br i1 %has, label %loop, label %done
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %acc4, %loop ]
  %mi = add i32 %rowoff, %k
  %mi64 = sext i32 %mi to i64
  %pm = getelementptr inbounds <4 x float>, ptr addrspace(1) %m, i64 %mi64
  %k64 = sext i32 %k to i64
  %px = getelementptr inbounds <4 x float>, ptr addrspace(1) %x, i64 %k64
  %mv = load <4 x float>, ptr addrspace(1) %pm, align 16
  %xv = load <4 x float>, ptr addrspace(1) %px, align 16
  %p = fmul contract <4 x float> %mv, %xv
  %p0 = extractelement <4 x float> %p, i32 0
  %p1 = extractelement <4 x float> %p, i32 1
  %p2 = extractelement <4 x float> %p, i32 2
  %p3 = extractelement <4 x float> %p, i32 3
  %acc1 = fadd contract float %acc, %p0
  %acc2 = fadd contract float %acc1, %p1
  %acc3 = fadd contract float %acc2, %p2
  %acc4 = fadd contract float %acc3, %p3
  %k1 = add nuw nsw i32 %k, 1
  %more = icmp slt i32 %k1, %cols4
  br i1 %more, label %loop, label %done
done:
  %r = phi float [ 0.0, %entry ], [ %acc4, %loop ]
  %row64 = zext i32 %row to i64
  %py = getelementptr inbounds float, ptr addrspace(1) %y, i64 %row64
  store float %r, ptr addrspace(1) %py, align 4
  ret void
}

attributes #0 = { nounwind "amdgpu-flat-work-group-size"="32,32" }
